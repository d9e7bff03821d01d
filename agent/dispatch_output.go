package agent

import (
	"os"
	"strings"

	"lookahead/torque"
)

// PartOutput is where a completed part's stdout and stderr are, found by
// looking (LocatePartOutput): the agent runs on the host pbs_mom
// delivers output to, and whether a copy to the -o/-e paths worked is
// only known there, after the job (torque.LocateStream).
type PartOutput struct {
	// Output and Error are the files found; "" when not found.
	Output, Error string
	// Kept says a stream was found where pbs_mom writes it before
	// delivery (~/.pbs_spool/<id>.OU, ~/<id>.OU), not at its path.
	Kept bool
	// Note says, when a stream is not at its -o/-e path, where it is or
	// where it was looked for; "" when both are at their paths.
	Note string
}

// LocatePartOutput looks for completed job j's streams at its
// Output_Path and Error_Path, then where pbs_mom leaves them when the
// copy fails, in home (the local user's home directory). exists is a
// file test (fileExists); pure otherwise.
func LocatePartOutput(exists func(string) bool, home string, j torque.BatchJob) PartOutput {
	var po PartOutput
	var notes []string
	for _, s := range []struct {
		name, path string
		stderr     bool
		dst        *string
	}{{"stdout", j.Output, false, &po.Output}, {"stderr", j.Error, true, &po.Error}} {
		found, where := torque.LocateStream(exists, home, j.ID, s.path, s.stderr)
		*s.dst = found
		want := torque.LocalPath(s.path)
		switch where {
		case torque.AtPath:
		case torque.InSpool, torque.InHome:
			po.Kept = true
			notes = append(notes, s.name+" not delivered to "+orUnset(want)+": pbs_mom left it at "+found)
		case torque.NotFound:
			notes = append(notes, notFound(s.name, want, home, j.ID, s.stderr))
		}
	}
	po.Note = strings.Join(notes, "; ")
	return po
}

// notFound says where a stream was looked for.
func notFound(name, want, home, id string, stderr bool) string {
	if home == "" {
		return name + " not found at " + orUnset(want) + " (the user's home, where pbs_mom may have left it, is not known here)"
	}
	h := strings.TrimRight(home, "/")
	return name + " not found (looked at " + orUnset(want) + ", " + h + "/.pbs_spool/" + id + suffixOf(stderr) + " and " + h + "/" + id + suffixOf(stderr) + ")"
}

func suffixOf(stderr bool) string {
	if stderr {
		return ".ER"
	}
	return ".OU"
}

func orUnset(p string) string {
	if p == "" {
		return "its path (none set)"
	}
	return p
}

// fileExists reports whether path names a regular file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// outputLocator is how followParts finds where an ended part's output
// is: by looking on this host for a Torque site (pbs_mom delivers output
// to the submit host, where the agent runs); nil for other executors
// (a simulated site writes no files; slurmd writes them on the nodes).
func (a *Agent) outputLocator() func(torque.BatchJob) PartOutput {
	if _, ok := a.deps.Executor.(*torque.Batch); ok {
		return a.locatePartOutput
	}
	return nil
}

// locatePartOutput is LocatePartOutput on this host for a completed part,
// its user's home found through the agent's user lookup (no home: only
// the -o/-e paths are looked at). It records the observation for the
// notes of later dispatches (outputNote). resMu held.
func (a *Agent) locatePartOutput(j torque.BatchJob) PartOutput {
	home := ""
	if u, err := a.deps.Users(j.User); err == nil {
		home = u.Home
	}
	po := LocatePartOutput(fileExists, home, j)
	switch {
	case po.Kept:
		a.parts.kept = j.ID + ": " + po.Note
	case po.Note == "":
		a.parts.kept = ""
	}
	return po
}

// outputNote is what a dispatch reply adds about where the part's output
// will be: said only when this site is known to keep output out of the
// -o/-e paths — by the rule (pbs_mom copies from ~/.pbs_spool, and home
// has none: the output stays in home as <id>.OU/.ER), or because the last
// part that ended here had its output kept. "" otherwise. resMu held.
func (a *Agent) outputNote(home, id string) string {
	switch {
	case a.cfg.Dispatch.OutputCopied && !isDir(home+"/.pbs_spool"):
		return " Output: it will stay in " + home + "/" + id + ".OU and .ER, not at the paths given: this site's pbs_mom " +
			"(Torque built with --disable-spool, no $spool_as_final_name) delivers only from a ~/.pbs_spool directory, and " +
			home + " has none; `lookahead status` shows where it is once the part ends."
	case a.parts.kept != "":
		return " Output: the last part that ended here did not get its output at its paths (" + a.parts.kept +
			"); this one's may stay in " + home + "/.pbs_spool/" + id + ".OU and .ER too: `lookahead status` shows where it is once the part ends."
	}
	return ""
}

package torque

import "strings"

// Where a completed job's stdout or stderr really is. On a Torque built
// with --disable-spool, pbs_mom writes the streams while the job runs
// into the user's ~/.pbs_spool/ as <id>.OU and <id>.ER (into the home
// directory itself when there is no ~/.pbs_spool), and at the job's end
// copies them to the -o/-e paths (unless $spool_as_final_name true made
// it write there from the start). The copy can fail and leave them where
// they were written: without ~/.pbs_spool it looks for them in its own
// spool directory; after a SIGHUP, Torque 6.1.3's pbs_mom has forgotten
// its own host name and copy command (reset_config_vars), so every
// destination looks remote and the copy runs an empty command
// (torque/testdata/torque-6.1.3/live-output/README.md). Which one
// happened is only known by looking, on the host the output is delivered
// to.

// Placement says where LocateStream found a stream.
type Placement int

// Placements.
const (
	NotFound Placement = iota // at none of the places pbs_mom puts it
	AtPath                    // delivered to its -o/-e path
	InSpool                   // left in ~/.pbs_spool/<id>.OU or .ER
	InHome                    // left in ~/<id>.OU or .ER
)

// LocalPath is the path part of a job's Output_Path or Error_Path
// ("host:/path", or a bare path).
func LocalPath(p string) string {
	if i := strings.IndexByte(p, ':'); i >= 0 && !strings.HasPrefix(p, "/") {
		return p[i+1:]
	}
	return p
}

// LocateStream finds a completed job's stdout (stderr false) or stderr:
// at path (its Output_Path or Error_Path, host prefix allowed), else
// where pbs_mom writes it before delivery, <home>/.pbs_spool/<id>.OU or
// .ER, else <home>/<id>.OU or .ER. It returns the path found and where,
// or "" and NotFound. exists is a file test (os.Stat); pure otherwise.
func LocateStream(exists func(string) bool, home, jobID, path string, stderr bool) (string, Placement) {
	suffix := ".OU"
	if stderr {
		suffix = ".ER"
	}
	if p := LocalPath(path); p != "" && exists(p) {
		return p, AtPath
	}
	if home == "" || jobID == "" {
		return "", NotFound
	}
	home = strings.TrimRight(home, "/")
	if p := home + "/.pbs_spool/" + jobID + suffix; exists(p) {
		return p, InSpool
	}
	if p := home + "/" + jobID + suffix; exists(p) {
		return p, InHome
	}
	return "", NotFound
}

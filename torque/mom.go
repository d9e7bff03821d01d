package torque

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Where a job's stdout and stderr end up is pbs_mom's business. On a
// Torque built with --disable-spool (NO_SPOOL_OUTPUT), pbs_mom writes the
// streams while the job runs into the user's ~/.pbs_spool/ as <id>.OU
// and <id>.ER (into the home directory itself when there is no
// ~/.pbs_spool) and at the job's end copies them to the -o/-e paths.
// Seen live on Torque 6.1.3 (torque/testdata/torque-6.1.3/live-output):
// without ~/.pbs_spool the copy looks in pbs_mom's own spool directory
// and fails (rcperr.<pid>: "/bin/cp: cannot stat
// '/var/spool/torque/spool//33.vm.ER'"), the files stay in the home
// directory; with it the copy works, unless pbs_mom was sent SIGHUP since
// it started: reloading its config resets its host name and copy command
// (reset_config_vars; `momctl -d 3` then shows "Host: vm/" and an empty
// "Copy Command:"), every destination looks remote, the copy runs an
// empty command and the files stay in ~/.pbs_spool, silently, until
// pbs_mom is restarted. With "$spool_as_final_name true" in
// mom_priv/config, pbs_mom writes them at the -o/-e paths from the start
// (src/resmom/start_exec.c, std_file_name), and nothing is copied.

// MomBuild is what `pbs_mom --about` says of how Torque was built.
type MomBuild struct {
	Package string // "torque 6.1.3"
	// Configure is the configure command line; DisableSpool says it
	// holds --disable-spool.
	Configure    string
	DisableSpool bool
}

// ParseMomAbout reads `pbs_mom --about` ("package:", "configure:" lines).
// Output without a configure line is an error: the build is not known.
func ParseMomAbout(r io.Reader) (MomBuild, error) {
	var b MomBuild
	found := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "package":
			b.Package = val
		case "configure":
			b.Configure, found = val, true
		}
	}
	if err := sc.Err(); err != nil {
		return MomBuild{}, fmt.Errorf("pbs_mom --about: %w", err)
	}
	if !found {
		return MomBuild{}, fmt.Errorf("pbs_mom --about: no configure line")
	}
	for _, f := range strings.Fields(b.Configure) {
		if strings.Trim(f, `'"`) == "--disable-spool" {
			b.DisableSpool = true
		}
	}
	return b, nil
}

// MomConfig is what lookahead reads of a pbs_mom's mom_priv/config.
type MomConfig struct {
	// SpoolAsFinalName is $spool_as_final_name: stdout and stderr are
	// written at their final (-o/-e) paths.
	SpoolAsFinalName bool
	// UseCP is the $usecp lines' values ("host:dir localdir"): a
	// destination they match is copied with cp whatever pbs_mom thinks
	// its host name is.
	UseCP []string
}

// ParseMomConfig reads a mom_priv/config: "$name value" lines, '#'
// comments; $usecp lines are kept; the last $spool_as_final_name wins and takes pbs_mom's
// booleans (setbool: a value starting with t, y or 1 is true, f, n or 0
// false, anything else leaves it as it was).
func ParseMomConfig(r io.Reader) (MomConfig, error) {
	var c MomConfig
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "$usecp" {
			c.UseCP = append(c.UseCP, strings.Join(f[1:], " "))
		}
		if len(f) < 2 || f[0] != "$spool_as_final_name" {
			continue
		}
		switch f[1][0] {
		case 't', 'T', 'y', 'Y', '1':
			c.SpoolAsFinalName = true
		case 'f', 'F', 'n', 'N', '0':
			c.SpoolAsFinalName = false
		}
	}
	if err := sc.Err(); err != nil {
		return MomConfig{}, fmt.Errorf("mom_priv/config: %w", err)
	}
	return c, nil
}

// MomDiag is what lookahead reads of `momctl -d 3`: the host name
// pbs_mom believes it runs on (after the "/" of its "Host:" line) and its
// copy command. A pbs_mom sent SIGHUP has lost both (Lost).
type MomDiag struct {
	Host, CopyCommand string
}

// Lost reports whether pbs_mom has lost its host name or copy command:
// it then delivers no output (every destination looks remote, and the
// copy command is empty).
func (d MomDiag) Lost() bool { return d.Host == "" || d.CopyCommand == "" }

// ParseMomDiag reads `momctl -d 3`'s "Host: short/full ..." and
// "Copy Command: ..." lines; output without both is an error.
func ParseMomDiag(r io.Reader) (MomDiag, error) {
	var d MomDiag
	host, cp := false, false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "Host:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				_, d.Host, _ = strings.Cut(f[0], "/")
			}
			host = true
		} else if rest, ok := strings.CutPrefix(line, "Copy Command:"); ok {
			d.CopyCommand, cp = strings.TrimSpace(rest), true
		}
	}
	if err := sc.Err(); err != nil {
		return MomDiag{}, fmt.Errorf("momctl -d 3: %w", err)
	}
	if !host || !cp {
		return MomDiag{}, fmt.Errorf("momctl -d 3: no Host: or Copy Command: line")
	}
	return d, nil
}

// OutputDelivery says whether the -o/-e paths of a job hold on a node
// whose pbs_mom was built as build (nil: unknown), configured as cfg
// (nil: not readable here) and runs as diag says (nil: not known). Pure.
type OutputDelivery struct {
	// Holds: the -o/-e paths are where the files end up, as far as is
	// known. Known: the answer is certain.
	Holds, Known bool
	// Copied: pbs_mom copies the streams from ~/.pbs_spool at the job's
	// end, so whether each part's output reached its paths is only known
	// by looking after it ended (a user without ~/.pbs_spool keeps it in
	// the home directory).
	Copied bool
	Why    string
}

const copiedWhy = "it writes each job's output into the user's ~/.pbs_spool and copies it to the -o/-e paths at the job's end: " +
	"a user without ~/.pbs_spool keeps it in the home directory as <id>.OU and <id>.ER, and after pbs_mom is sent SIGHUP " +
	"(a config reload) Torque 6.1.3's pbs_mom forgets its host name and copy command and copies nothing until restarted"

// Delivery decides OutputDelivery.
func Delivery(build *MomBuild, cfg *MomConfig, diag *MomDiag) OutputDelivery {
	switch {
	case cfg != nil && cfg.SpoolAsFinalName:
		return OutputDelivery{Holds: true, Known: true, Why: "pbs_mom writes stdout/stderr at the -o/-e paths ($spool_as_final_name true)"}
	case build != nil && !build.DisableSpool:
		return OutputDelivery{Holds: true, Known: true, Why: "pbs_mom (built with spool) copies stdout/stderr to the -o/-e paths at the job's end"}
	case build != nil && cfg != nil && diag != nil && diag.Lost() && len(cfg.UseCP) > 0:
		return OutputDelivery{Holds: true, Copied: true, Why: "Torque is built with --disable-spool, pbs_mom has no " +
			"$spool_as_final_name true and has lost its host name and copy command (momctl -d 3; it was sent SIGHUP since it " +
			"started): only destinations its $usecp lines match (" + strings.Join(cfg.UseCP, ", ") + ") get their output, others keep it in ~/.pbs_spool"}
	case build != nil && cfg != nil && diag != nil && diag.Lost():
		return OutputDelivery{Known: true, Copied: true, Why: fmt.Sprintf("Torque is built with --disable-spool, pbs_mom has no "+
			"$spool_as_final_name true, and it has lost its host name and copy command (momctl -d 3: host %q, copy command %q; "+
			"it was sent SIGHUP since it started): every job's output stays in ~/.pbs_spool/<id>.OU and .ER (or ~/<id>.OU), "+
			"never at the -o/-e paths, until pbs_mom is restarted", diag.Host, diag.CopyCommand)}
	case build != nil && cfg != nil:
		return OutputDelivery{Holds: true, Copied: true, Why: "Torque is built with --disable-spool and pbs_mom has no " +
			"$spool_as_final_name true: " + copiedWhy}
	case build != nil:
		return OutputDelivery{Holds: true, Why: "Torque is built with --disable-spool; pbs_mom's mom_priv/config is not on this host: " +
			"unless every node's has $spool_as_final_name true, " + copiedWhy}
	}
	return OutputDelivery{Holds: true, Why: "how pbs_mom was built is not known here (no pbs_mom --about): if Torque was built with " +
		"--disable-spool, every node's mom_priv/config needs $spool_as_final_name true for the -o/-e paths to hold for sure"}
}

package torque

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Where a job's stdout and stderr end up is pbs_mom's business, and on
// a Torque built with --disable-spool (NO_SPOOL_OUTPUT) the -o/-e paths
// given to qsub do not hold unless pbs_mom is told to write there
// directly. Seen live on Torque 6.1.3 (issue 35): pbs_mom writes the
// streams into the user's home directory as <id>.OU and <id>.ER (or into
// ~/.pbs_spool/ when that directory exists) while the job runs, and at
// its end copies them from its own spool directory, where they are not:
// rcperr.<pid> says "/bin/cp: cannot stat
// '/var/spool/torque/spool//2.vm.ER'" (with ~/.pbs_spool the copy
// fails silently); the files stay where they were written. With
// "$spool_as_final_name true" in mom_priv/config, pbs_mom writes them at
// the -o/-e paths from the start (src/resmom/start_exec.c,
// std_file_name), and nothing is copied.

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
}

// ParseMomConfig reads a mom_priv/config: "$name value" lines, '#'
// comments; the last $spool_as_final_name wins and takes pbs_mom's
// booleans (setbool: a value starting with t, y or 1 is true, f, n or 0
// false, anything else leaves it as it was).
func ParseMomConfig(r io.Reader) (MomConfig, error) {
	var c MomConfig
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
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

// OutputDelivery says whether the -o/-e paths of a job hold on a node
// whose pbs_mom was built as build (nil: unknown) and configured as cfg
// (nil: not readable here), and, when they do not, where the streams
// stay. Pure.
type OutputDelivery struct {
	// Holds: the -o/-e paths are where the files end up. Known: the
	// answer is certain (both inputs known, or spool_as_final_name set).
	Holds, Known bool
	Why          string
}

// Delivery decides OutputDelivery.
func Delivery(build *MomBuild, cfg *MomConfig) OutputDelivery {
	switch {
	case cfg != nil && cfg.SpoolAsFinalName:
		return OutputDelivery{Holds: true, Known: true, Why: "pbs_mom writes stdout/stderr at the -o/-e paths ($spool_as_final_name true)"}
	case build != nil && !build.DisableSpool:
		return OutputDelivery{Holds: true, Known: true, Why: "pbs_mom (built with spool) copies stdout/stderr to the -o/-e paths at the job's end"}
	case build != nil && cfg != nil:
		return OutputDelivery{Known: true, Why: "Torque is built with --disable-spool and pbs_mom has no $spool_as_final_name true: " +
			"a job's output stays in its user's home as <id>.OU and <id>.ER (or in ~/.pbs_spool/), never at the -o/-e paths"}
	case build != nil:
		return OutputDelivery{Why: "Torque is built with --disable-spool; pbs_mom's mom_priv/config is not on this host: unless every " +
			"node's has $spool_as_final_name true, output stays in the user's home as <id>.OU and <id>.ER"}
	}
	return OutputDelivery{Holds: true, Why: "how pbs_mom was built is not known here (no pbs_mom --about): if Torque was built with " +
		"--disable-spool, every node's mom_priv/config needs $spool_as_final_name true for the -o/-e paths to hold"}
}

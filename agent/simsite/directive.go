package simsite

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Behaviour is how a dispatched part behaves on a simulated site, which
// cannot run its script: read from the script's "#lookahead-sim" lines.
//
//	#lookahead-sim runtime=20m exit=0      every site: runs 20 min, exits 0
//	#lookahead-sim site=beta exit=3        on beta only: exits 3
//	#lookahead-sim site=gamma hold         on gamma: never starts
//
// Keys: runtime (a Go duration or seconds; default: the part's walltime),
// exit (the exit status, default 0), hold (the part never starts), site
// (the line applies to that site only). Later lines override earlier
// ones. A runtime over the walltime is killed at the walltime with Torque's
// exit status -11 (JOB_EXEC_OVERLIMIT_WT).
type Behaviour struct {
	Runtime time.Duration // 0: the part's walltime
	Exit    int
	Hold    bool
}

// ParseBehaviour reads the directives for site from script. A directive
// line with an unknown key or a bad value is an error naming the line;
// other lines are ignored.
func ParseBehaviour(script []byte, site string) (Behaviour, error) {
	var b Behaviour
	sc := bufio.NewScanner(bytes.NewReader(script))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "#lookahead-sim")
		if !ok {
			continue
		}
		if err := b.apply(strings.Fields(rest), site); err != nil {
			return Behaviour{}, fmt.Errorf("script line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Behaviour{}, fmt.Errorf("script: %w", err)
	}
	return b, nil
}

func (b *Behaviour) apply(words []string, site string) error {
	next := *b
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		switch k {
		case "site":
			if v == "" {
				return fmt.Errorf("site= needs a name")
			}
			if v != site {
				return nil // the line is for another site
			}
		case "hold":
			next.Hold = true
		case "exit":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("exit=%q: not an integer", v)
			}
			next.Exit = n
		case "runtime":
			d, err := parseDur(v)
			if err != nil {
				return err
			}
			next.Runtime = d
		default:
			return fmt.Errorf("unknown #lookahead-sim key %q", k)
		}
	}
	*b = next
	return nil
}

func parseDur(v string) (time.Duration, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 && n < 1<<40 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("runtime=%q: a duration like 20m or seconds", v)
	}
	return d, nil
}

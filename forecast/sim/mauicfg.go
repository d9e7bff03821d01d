package sim

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// MauiConfig is what a site's maui.cfg says about scheduling, as far as the
// simulator follows it: Policy, and in Unmodelled one line per setting it
// cannot follow (in file order, each once), for operators to read.
type MauiConfig struct {
	Policy     Policy
	Unmodelled []string
}

// ReadMauiConfig reads a Maui 3.3.1 configuration file and returns the
// scheduling policy it sets, starting from Maui's defaults
// (RESERVATIONDEPTH 1, CURRENTHIGHEST, FIRSTFIT, LASTAVAILABLE, queue time
// weight 1). Parameter names are case-sensitive, as in Maui; '#' starts a
// comment; a parameter given twice takes its last value. A value the
// simulator cannot read for a parameter it follows is an error naming the
// line; parameters it does not follow are listed in Unmodelled, and so are
// unknown ones.
func ReadMauiConfig(r io.Reader) (MauiConfig, error) {
	c := &cfgReader{prio: NewPriority()}
	c.pol = Policy{Depth: 1, NodeAlloc: LastAvailable, Backfill: FirstFit}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		c.line = n
		if err := c.param(f[0], f[1:]); err != nil {
			return MauiConfig{}, fmt.Errorf("maui.cfg:%d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return MauiConfig{}, fmt.Errorf("maui.cfg: %w", err)
	}
	c.finish()
	return MauiConfig{Policy: c.pol, Unmodelled: c.notes}, nil
}

type cfgReader struct {
	pol   Policy
	prio  *Priority
	lim   *Limits
	limAt int // the line of the first usage limit
	line  int
	notes []string
	seen  map[string]bool
	err   error // a bad value for the parameter just read

	fs      *Fairshare // FSPOLICY and the rest, as read (fairshare_cfg.go)
	fsCapAt int        // the line of the last FSTARGET cap
}

// note records a setting the simulator does not follow, once per text.
func (c *cfgReader) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if !c.seen[msg] {
		c.seen[msg] = true
		c.notes = append(c.notes, fmt.Sprintf("maui.cfg:%d: %s", c.line, msg))
	}
}

// param handles one "NAME[index] values..." line.
func (c *cfgReader) param(key string, vals []string) error {
	name, index, _ := strings.Cut(key, "[")
	index = strings.TrimSuffix(index, "]")
	if strings.HasSuffix(name, "CFG") {
		return c.credLine(name, index, vals)
	}
	if index != "" && index != "0" {
		if isPolicyParam(name) {
			c.note("%s[%s]: per-partition and per-QOS settings are not modelled", name, index)
		}
		return nil
	}
	val := strings.Join(vals, " ")
	switch {
	case harmless(name):
		return nil
	case c.policyParam(name, val):
		return c.err
	case c.weightParam(name, val):
		return c.err
	case c.fsParam(name, val):
		return c.err
	}
	if reason, ok := unmodelled[name]; ok {
		if !zeroValue(val) {
			c.note("%s %s: %s is not modelled", name, val, reason)
		}
		return nil
	}
	c.note("%s: not a parameter the simulator knows; ignored", name)
	return nil
}

// finish applies what depends on several parameters.
func (c *cfgReader) finish() {
	c.pol.Priority = c.prio
	c.pol.Limits = c.lim
	c.standingNotes()
	c.fsFinish()
	c.partitionNote() // partition.go
	if c.lim != nil {
		c.line = c.limAt
		c.note("usage limits (MAXJOB, MAXPROC, MAXPS, MAXWC) are followed in part: where Maui reserves for a limited credential (MPolicyGetEStartTime) is not, and schedules can differ from Maui's (docs/simulator.md, Usage limits)")
	}
	if c.lim != nil && c.pol.Reservation == Highest {
		c.note("RESERVATIONPOLICY HIGHEST with usage limits: a reserved job over a limit when its reservation comes due is deferred by Maui (MQueueScheduleRJobs); not modelled")
	}
}

// isPolicyParam reports whether name is one the simulator reads.
func isPolicyParam(name string) bool {
	_, w := weightFields[name]
	_, p := policyParams[name]
	return w || p
}

// zeroValue reports whether a value switches a feature off.
func zeroValue(v string) bool {
	switch strings.ToUpper(v) {
	case "", "0", "0.0", "NONE", "FALSE", "OFF", "NO":
		return true
	}
	return false
}

func parseCount(name, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: not an integer", name, v)
	}
	return n, nil
}

// parseMauiDuration reads Maui's [[[DD:]HH:]MM:]SS durations.
func parseMauiDuration(name, v string) (int64, error) {
	parts := strings.Split(v, ":")
	if len(parts) > 4 {
		return 0, fmt.Errorf("%s %q: not a duration", name, v)
	}
	mult := []int64{1, 60, 3600, 86400}
	var d int64
	for k := range parts {
		n, err := strconv.ParseInt(parts[len(parts)-1-k], 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s %q: not a duration", name, v)
		}
		d += n * mult[k]
	}
	return d, nil
}

// pick is one of names (case-insensitive) or an error.
func pick(name, v string, names ...string) (int, error) {
	if k := slices.Index(names, strings.ToUpper(v)); k >= 0 {
		return k, nil
	}
	return 0, fmt.Errorf("%s %q: want one of %s", name, v, strings.Join(names, ", "))
}

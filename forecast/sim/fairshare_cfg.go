package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Reading fairshare from maui.cfg: FSPOLICY, FSINTERVAL, FSDEPTH, FSDECAY,
// the FS*WEIGHT and FS*CAP priority parameters, and FSTARGET on the
// *CFG lines (MFSProcessOConfig, MFSTargetFromString).

// fsWeights are the fairshare priority weights and caps.
var fsWeights = map[string]func(p *Priority) any{
	"FSUSERWEIGHT": func(p *Priority) any { return &p.FSUser }, "FSGROUPWEIGHT": func(p *Priority) any { return &p.FSGroup },
	"FSACCOUNTWEIGHT": func(p *Priority) any { return &p.FSAccount }, "FSQOSWEIGHT": func(p *Priority) any { return &p.FSQOS },
	"FSCLASSWEIGHT": func(p *Priority) any { return &p.FSClass }, "FSCAP": func(p *Priority) any { return &p.Caps.FS },
	"FSUSERCAP": func(p *Priority) any { return &p.Caps.FSUser }, "FSGROUPCAP": func(p *Priority) any { return &p.Caps.FSGroup },
	"FSACCOUNTCAP": func(p *Priority) any { return &p.Caps.FSAccount }, "FSQOSCAP": func(p *Priority) any { return &p.Caps.FSQOS },
	"FSCLASSCAP": func(p *Priority) any { return &p.Caps.FSClass },
}

func init() {
	for k, f := range fsWeights {
		weightFields[k] = f
	}
}

// fsParam handles FSPOLICY, FSINTERVAL, FSDEPTH, FSDECAY and FSWEIGHT;
// false when name is none of them. A bad value is left in c.err.
func (c *cfgReader) fsParam(name, v string) bool {
	c.err = nil
	switch name {
	case "FSPOLICY":
		c.fsPolicy(v)
	case "FSINTERVAL":
		var d int64
		if d, c.err = parseMauiDuration(name, v); c.err == nil && d <= 0 {
			c.err = fmt.Errorf("%s %q: not positive", name, v)
		}
		c.fsConf().Interval = d
	case "FSDEPTH":
		var n int64
		if n, c.err = parseCount(name, v); c.err == nil && n < 1 {
			c.err = fmt.Errorf("%s %q: below 1", name, v)
		}
		c.fsConf().Depth = int(min(n, maxFSDepth))
	case "FSDECAY":
		var d float64
		if d, c.err = strconv.ParseFloat(v, 64); c.err != nil || !(d >= 0) || math.IsInf(d, 0) {
			c.err = fmt.Errorf("%s %q: not a decay factor", name, v)
		}
		c.fsConf().Decay = d
	case "FSWEIGHT":
		if strings.HasSuffix(v, "%") {
			c.note("FSWEIGHT %s: a weight in percent of the priority is not modelled", v)
			return true
		}
		c.prio.FS, c.err = parseCount(name, v)
	default:
		return false
	}
	return true
}

// fsConf is the fairshare configuration being read (kept aside until
// FSPOLICY switches it on).
func (c *cfgReader) fsConf() *Fairshare {
	if c.fs == nil {
		c.fs = NewFairshare(0)
	}
	return c.fs
}

func (c *cfgReader) fsPolicy(v string) {
	f := c.fsConf()
	s, percent := strings.CutSuffix(v, "%")
	f.Percent = percent
	if on, err := parseBool("FSPOLICY", s); err == nil {
		f.Policy = map[bool]FSPolicy{true: FSDedicatedPS, false: 0}[on] // Maui: a true value is DEDICATEDPS
		return
	}
	k, err := pick("FSPOLICY", s, "NONE", "DEDICATEDPS", "DEDICATEDPES", "UTILIZEDPS")
	c.err = err
	f.Policy = FSPolicy(k)
	if k == 3 {
		c.note("FSPOLICY UTILIZEDPS: the usage to come is counted as dedicated (all a job's processors busy), as Maui's simulation does; on a live site it counts measured use")
	}
}

var fsCredOf = map[string]FSCred{"USERCFG": FSUser, "GROUPCFG": FSGroup, "ACCOUNTCFG": FSAccount, "QOSCFG": FSQOS, "CLASSCFG": FSClass}

// fsTargetAttr reads FSTARGET=<value>[+-^%] on a *CFG line; false when key
// is not FSTARGET. A bad value is left in c.err.
func (c *cfgReader) fsTargetAttr(kind, name, key, val string) bool {
	k, ok := fsCredOf[kind]
	if key != "FSTARGET" || !ok {
		return false
	}
	c.err = nil
	num := strings.TrimRight(val, "+-^%")
	t, err := strconv.ParseFloat(num, 64)
	if err != nil || len(val)-len(num) > 1 || math.IsNaN(t) || math.IsInf(t, 0) {
		c.err = fmt.Errorf("%s[%s] FSTARGET=%q: want a number with an optional +, -, ^ or %%", kind, name, val)
		return true
	}
	mode := FSTargetPlain
	if len(val) > len(num) {
		mode = map[byte]FSMode{'+': FSFloor, '-': FSCeiling, '^': FSCapAbs, '%': FSCapRel}[val[len(num)]]
	}
	f := c.fsConf()
	if f.Targets[k] == nil {
		f.Targets[k] = map[string]FSTarget{}
	}
	f.Targets[k][name] = FSTarget{Value: t, Mode: mode}
	if mode == FSCapAbs || mode == FSCapRel {
		c.fsCapAt = c.line
	}
	return true
}

// fsFinish switches fairshare on when FSPOLICY says so and reports what
// it does not follow.
func (c *cfgReader) fsFinish() {
	if c.fs == nil || c.fs.Policy == 0 {
		return
	}
	c.pol.Fairshare = c.fs
	if c.fsCapAt > 0 {
		c.line = c.fsCapAt
		if c.lim != nil || c.pol.Reservation == Highest {
			c.note("fairshare caps with usage limits or RESERVATIONPOLICY HIGHEST: a capped job's frozen queue time and kept reservation are not followed")
		}
	}
}

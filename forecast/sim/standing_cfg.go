package sim

import "strings"

// srLine reads one SRCFG[name] line; several lines for one name add up,
// as in Maui.
func (c *cfgReader) srLine(name string, attrs []string) error {
	if c.pol.Standing == nil {
		c.pol.Standing = &Standing{}
	}
	all := &c.pol.Standing.Res
	if name == "" {
		name = "SR." + itoa(len(*all))
	}
	k := 0
	for k < len(*all) && (*all)[k].Name != name {
		k++
	}
	if k == len(*all) {
		*all = append(*all, newStanding(name))
		(*all)[k].line = c.line
	}
	s := &(*all)[k]
	for _, a := range attrs {
		key, val, _ := strings.Cut(a, "=")
		key = strings.ToUpper(key)
		ok, err := s.srAttr(key, val)
		if err != nil {
			return err
		}
		switch {
		case ok:
		case key == "TASKCOUNT" && zeroValue(val):
		case key == "TASKCOUNT":
			if err := s.taskCount(val); err != nil {
				return err
			}
		case key == "PRIORITY", key == "CHARGEACCOUNT", key == "OWNER", key == "NAME":
		default:
			c.note("SRCFG[%s] %s=%s: not modelled", name, key, val)
		}
	}
	return nil
}

// standingNotes reports what the simulator does not follow of each
// standing reservation.
func (c *cfgReader) standingNotes() {
	if c.pol.Standing == nil {
		return
	}
	for _, s := range c.pol.Standing.Res {
		c.line = s.line
		switch {
		case len(s.Hosts) == 0 && s.TaskCount == 0:
			c.note("SRCFG[%s]: no HOSTLIST: the simulator holds nothing for it", s.Name)
		case s.TaskCount > 0:
			c.taskCountNote(s) // standing_task.go
		case s.Period == PeriodDay && s.End > 0 && s.End <= s.Start:
			c.note("SRCFG[%s]: ENDTIME not after STARTTIME (a window over midnight) is not modelled; it holds nothing", s.Name)
		case s.Period == PeriodDay && s.End > dayLen, s.Period == PeriodWeek && s.WEnd > weekLen:
			c.note("SRCFG[%s]: a window past its period's end (windows of successive periods overlap in Maui) is not modelled; it holds nothing", s.Name)
		}
	}
}

package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// StandingRes is one standing reservation (maui.cfg SRCFG[name]) as Maui
// 3.3.1 makes it (MSRProcessConfig, MSRGetAttributes, MSRUpdate). Its
// windows sit on the wall clock, in Policy.Zone: a DAY period holds
// [STARTTIME, ENDTIME) of every day in Days, a WEEK period holds
// [WSTARTTIME, WENDTIME) of every week, INFINITY holds from the first pass
// on, for ever. At most Depth periods (the current one first) have their
// window made at a time; the next is made at the first pass of a new day
// once the oldest has ended, as Maui does.
//
// A window holds Procs processors (all when Procs < 0) of every node of
// Hosts against every job outside the ACL. Jobs inside it may start on its
// nodes, which they take first (standing_acl.go), as far as Maui's rules
// for them are known; ReadMauiConfig says it is followed in part.
type StandingRes struct {
	Name   string
	Period SRPeriod
	// Start and End are STARTTIME and ENDTIME, seconds into the day
	// (DAY); End 0 is the day's end. WStart and WEnd are WSTARTTIME and
	// WENDTIME, seconds into the week from Sunday 00:00 (WEEK; a DAY
	// period ends early on WEnd's weekday).
	Start, End, WStart, WEnd int64
	// Days are the weekdays a DAY period holds, bit 0 Sunday (DAYS; 0x7f
	// all).
	Days  uint8
	Depth int
	Hosts []string
	// Procs is RESOURCES=PROCS:k, what one task holds; < 0 a whole node.
	Procs int
	// TaskCount is TASKCOUNT=, the tasks a window without HOSTLIST holds
	// (standing_task.go); 0: none.
	TaskCount int
	// The ACL: USERLIST, GROUPLIST, ACCOUNTLIST, CLASSLIST, QOSLIST.
	Users, Groups, Accounts, Classes, QOS []string

	line int // maui.cfg line of its first SRCFG, for notes
}

// SRPeriod is a standing reservation's PERIOD.
type SRPeriod int

// Standing reservation periods.
const (
	PeriodDay SRPeriod = iota
	PeriodWeek
	PeriodInfinity
)

const (
	dayLen  = 86400
	weekLen = 7 * dayLen
)

// newStanding is Maui's MSRInitialize: DAY, depth 2, every day, whole
// nodes.
func newStanding(name string) StandingRes {
	return StandingRes{Name: name, Period: PeriodDay, Days: 0x7f, Depth: 2, Procs: -1}
}

// Admits reports whether j is inside the reservation's ACL.
func (s *StandingRes) Admits(j Job) bool {
	return slices.Contains(s.Users, j.User) || slices.Contains(s.Groups, j.Group) ||
		slices.Contains(s.Accounts, j.Account) || slices.Contains(s.Classes, j.Queue) ||
		(j.QOS != "" && slices.Contains(s.QOS, j.QOS))
}

func (s *StandingRes) hasACL() bool {
	return len(s.Users)+len(s.Groups)+len(s.Accounts)+len(s.Classes)+len(s.QOS) > 0
}

// window is MSRGetAttributes: the window of period k (0 the current one)
// seen at now, and false when that period holds nothing. The end is the
// start plus the period's duration (MSRSetRes).
func (s *StandingRes) window(now int64, k int, zone *time.Location) (start, end int64, ok bool) {
	_, off := time.Unix(now, 0).In(zone).Zone()
	dayOff := (now + int64(off)) % dayLen
	var ps int64
	switch s.Period {
	case PeriodInfinity:
		if k != 0 {
			return 0, 0, false
		}
		return now, never, true
	case PeriodWeek:
		wd := int64(time.Unix(now, 0).In(zone).Weekday())
		ps = now - dayOff - wd*dayLen + int64(k)*weekLen
	default:
		ps = now - dayOff + int64(k)*dayLen
	}
	at := ps
	if k == 0 {
		at = max(ps, now)
	}
	lt := time.Unix(at, 0).In(zone)
	dayTime := int64(lt.Hour()*3600 + lt.Minute()*60 + lt.Second())
	weekDay := int64(lt.Weekday())
	weekTime := dayTime + weekDay*dayLen
	var so, eo int64
	if s.Period == PeriodWeek {
		so, eo = max(s.WStart, 0), int64(weekLen)
		if s.WEnd > 0 {
			eo = s.WEnd
		}
		if k == 0 {
			so = max(so, weekTime)
		}
		if weekTime > eo {
			return 0, 0, false
		}
	} else {
		so, eo = s.Start, int64(dayLen)
		if s.WEnd > 0 && weekDay == s.WEnd/dayLen {
			eo = s.WEnd % dayLen
		}
		if s.End > 0 {
			eo = s.End
		}
		if k == 0 {
			so = max(so, dayTime)
		}
		if (s.WEnd > 0 && s.WEnd < weekTime) || dayTime > eo || s.Days&(1<<weekDay) == 0 {
			return 0, 0, false
		}
	}
	if eo <= so || eo > s.periodLen() {
		return 0, 0, false // over midnight, or past the period: see standingNotes
	}
	start = max(ps+so, now)
	return start, start + eo - so, true
}

// Windows lists the reservation's windows that overlap [from, to), as
// they will be made: every period's, whatever the depth (a forecast holds
// them all, since Maui makes each before it comes due). A nil zone is UTC.
func (s *StandingRes) Windows(from, to int64, zone *time.Location) [][2]int64 {
	if zone == nil {
		zone = time.UTC
	}
	var out [][2]int64
	for k := 0; ; k++ {
		st, en, ok := s.window(from, k, zone)
		if ok && st < to && en > from {
			out = append(out, [2]int64{st, en})
		}
		if s.Period == PeriodInfinity || s.periodStart(from, k+1, zone) >= to {
			return out
		}
	}
}

// periodLen is a DAY or WEEK period's length.
func (s *StandingRes) periodLen() int64 {
	if s.Period == PeriodWeek {
		return weekLen
	}
	return dayLen
}

// periodStart is the start of period k counted from now's.
func (s *StandingRes) periodStart(now int64, k int, zone *time.Location) int64 {
	_, off := time.Unix(now, 0).In(zone).Zone()
	ps := now - (now+int64(off))%dayLen
	if s.Period == PeriodWeek {
		return ps - int64(time.Unix(now, 0).In(zone).Weekday())*dayLen + int64(k)*weekLen
	}
	return ps + int64(k)*dayLen
}

// srAttr reads one attribute of an SRCFG line into s; false when the
// simulator does not follow it.
func (s *StandingRes) srAttr(key, val string) (bool, error) {
	var err error
	switch key {
	case "PERIOD":
		var k int
		k, err = pick("PERIOD", val, "DAY", "WEEK", "INFINITY")
		s.Period = SRPeriod(k)
	case "STARTTIME", "ENDTIME", "WSTARTTIME", "WENDTIME":
		var d int64
		d, err = parseMauiDuration(key, val)
		*map[string]*int64{"STARTTIME": &s.Start, "ENDTIME": &s.End, "WSTARTTIME": &s.WStart, "WENDTIME": &s.WEnd}[key] = d
	case "DAYS":
		s.Days, err = srDays(val)
	case "DEPTH":
		s.Depth, err = strconv.Atoi(val)
		if err == nil && (s.Depth < 1 || s.Depth > 64) {
			err = fmt.Errorf("DEPTH %d: want 1 to 64", s.Depth)
		}
	case "HOSTLIST":
		s.Hosts = strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == ' ' })
	case "RESOURCES":
		s.Procs, err = srProcs(val)
	case "USERLIST", "GROUPLIST", "ACCOUNTLIST", "CLASSLIST", "QOSLIST":
		l := map[string]*[]string{"USERLIST": &s.Users, "GROUPLIST": &s.Groups, "ACCOUNTLIST": &s.Accounts, "CLASSLIST": &s.Classes, "QOSLIST": &s.QOS}[key]
		*l = append(*l, strings.Split(val, ",")...)
	default:
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("SRCFG[%s] %s=%s: %w", s.Name, key, val, err)
	}
	return true, nil
}

// srDays reads DAYS: ALL, or weekday names (Mon or MON) in any list form;
// as Maui does, any name found in the value counts.
func srDays(v string) (uint8, error) {
	if strings.Contains(v, "ALL") {
		return 0x7f, nil
	}
	var d uint8
	for i, n := range []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"} {
		if strings.Contains(v, n) || strings.Contains(v, strings.ToUpper(n)) {
			d |= 1 << i
		}
	}
	if d == 0 {
		return 0, fmt.Errorf("no weekday in %q", v)
	}
	return d, nil
}

// srProcs reads RESOURCES=PROCS:k (the only resource simulated).
func srProcs(v string) (int, error) {
	n, ok := strings.CutPrefix(strings.ToUpper(v), "PROCS:")
	if !ok || strings.ContainsAny(n, "+;") {
		return 0, fmt.Errorf("only PROCS:<count> is modelled")
	}
	k, err := strconv.Atoi(n)
	if err != nil || (k <= 0 && k != -1) {
		return 0, fmt.Errorf("PROCS %q: want a count", n)
	}
	return k, nil
}

package sim

import "time"

// Clock is the wall clock a simulation runs on (docs/simulator.md, "The
// wall clock"). The simulator's times are Unix seconds, and some of Maui's
// policy is tied to them: fairshare intervals turn on multiples of
// FSINTERVAL since the epoch, and standing reservations' windows (DAY,
// WEEK, STARTTIME, DAYS) and the day they are renewed on fall on the
// site's local time. So every run is put on a clock first, by the one rule
// below, whatever drives it: a live site's forecast or a trace replay.
type Clock struct {
	// Origin is the Unix time of the workload's time 0: a trace's submit
	// times are counted from it. A live site's times are Unix times
	// already: 0.
	Origin int64
	// Zone is the site's local time, the zone its Maui runs in (TZ).
	Zone *time.Location
}

// ClockSetting is what one source says of the clock; either part may be
// missing.
type ClockSetting struct {
	Origin    int64
	HasOrigin bool
	Zone      *time.Location // nil: not said
}

// LiveClock is a live site's clock: now is the real time, the workload's
// times are Unix times, and zone is the site's (maui.timezone; nil is the
// host's own, time.Local, the zone the Maui beside the agent runs in).
func LiveClock(zone *time.Location) Clock {
	if zone == nil {
		zone = time.Local
	}
	return Clock{Zone: zone}
}

// TraceClock is a replayed trace's clock: each part from the override (a
// command-line flag) when it says it, else from the trace itself (an SWF
// header's UnixStartTime and TimeZoneString), else the epoch
// (1970-01-01 00:00) and UTC. Guessed reports that the origin came from
// neither, so that a run whose policy follows the wall clock can say so.
func TraceClock(override, trace ClockSetting) (c Clock, guessed bool) {
	c.Zone = time.UTC
	switch {
	case override.HasOrigin:
		c.Origin = override.Origin
	case trace.HasOrigin:
		c.Origin = trace.Origin
	default:
		guessed = true
	}
	switch {
	case override.Zone != nil:
		c.Zone = override.Zone
	case trace.Zone != nil:
		c.Zone = trace.Zone
	}
	return c, guessed
}

// Jobs puts jobs whose submit times count from the workload's time 0 on
// the clock (in place).
func (c Clock) Jobs(jobs []Job) {
	for i := range jobs {
		jobs[i].Submit += c.Origin
	}
}

// Site puts a site's policy on the clock: its standing reservations'
// windows fall in the clock's zone. The policy's other wall-clock rules
// (fairshare intervals) count from the epoch and need nothing here.
func (c Clock) Site(p Policy) Policy {
	if p.Standing != nil {
		st := *p.Standing
		st.Zone = c.Zone
		p.Standing = &st
	}
	return p
}

// FollowsWallClock reports whether p has rules tied to the wall clock, so
// that a run of it on a guessed clock lands them at the wrong hour.
func (p Policy) FollowsWallClock() bool {
	return p.Standing != nil || p.Fairshare != nil
}

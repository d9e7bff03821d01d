package sim

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below load without the host's database
)

func TestTraceClockRule(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	must(t, err)
	ny, err := time.LoadLocation("America/New_York")
	must(t, err)
	for _, c := range []struct {
		name        string
		over, trace ClockSetting
		origin      int64
		zone        *time.Location
		guessed     bool
	}{
		{"nothing said: the epoch in UTC, guessed", ClockSetting{}, ClockSetting{}, 0, time.UTC, true},
		{"the trace's header", ClockSetting{}, ClockSetting{Origin: 835823160, HasOrigin: true, Zone: ny}, 835823160, ny, false},
		{"the flags win", ClockSetting{Origin: 1000, HasOrigin: true, Zone: paris}, ClockSetting{Origin: 835823160, HasOrigin: true, Zone: ny}, 1000, paris, false},
		{"each part on its own", ClockSetting{Zone: paris}, ClockSetting{Origin: 5, HasOrigin: true}, 5, paris, false},
		{"an origin of 0 said is said", ClockSetting{Origin: 0, HasOrigin: true}, ClockSetting{Origin: 9, HasOrigin: true}, 0, time.UTC, false},
	} {
		got, guessed := TraceClock(c.over, c.trace)
		if got.Origin != c.origin || got.Zone != c.zone || guessed != c.guessed {
			t.Errorf("%s: got %d %v guessed %v, want %d %v %v", c.name, got.Origin, got.Zone, guessed, c.origin, c.zone, c.guessed)
		}
	}
	if LiveClock(nil).Zone != time.Local || LiveClock(paris).Zone != paris || LiveClock(paris).Origin != 0 {
		t.Error("a live clock: Unix times (origin 0) in the site's zone, the host's by default")
	}
}

// A standing window on the clock: the same trace puts an 08:00 window at
// 08:00 in the clock's zone, and its jobs at the clock's origin.
func TestClockPlacesWindowsAndJobs(t *testing.T) {
	mc, err := ReadMauiConfig(strings.NewReader("SRCFG[day] PERIOD=DAY STARTTIME=08:00:00 ENDTIME=18:00:00 HOSTLIST=n0001\n"))
	must(t, err)
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	must(t, err)
	origin := time.Date(2025, 11, 28, 0, 0, 0, 0, time.UTC).Unix()
	clock, _ := TraceClock(ClockSetting{}, ClockSetting{Origin: origin, HasOrigin: true, Zone: kolkata})
	p := clock.Site(mc.Policy)
	if mc.Policy.Standing.Zone != nil {
		t.Fatal("Site changed the policy it was given")
	}
	jobs := []Job{{ID: "a", Procs: 1, Walltime: 60, Runtime: 60, Submit: 0}}
	clock.Jobs(jobs)
	if jobs[0].Submit != origin {
		t.Fatalf("submit %d, want the origin %d", jobs[0].Submit, origin)
	}
	w := p.Standing.Res[0].Windows(origin, origin+86400, p.Standing.Zone)
	want := time.Date(2025, 11, 28, 8, 0, 0, 0, kolkata).Unix()
	if len(w) == 0 || w[0][0] != want {
		t.Fatalf("windows %v, want the first at %d (08:00 in Kolkata)", w, want)
	}
	if !p.FollowsWallClock() || EASY.FollowsWallClock() {
		t.Error("FollowsWallClock: standing reservations do, EASY does not")
	}
}

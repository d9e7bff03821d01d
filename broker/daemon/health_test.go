package daemon

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestLongCyclesAreNotStuck: a broker whose every full cycle takes longer
// than the cycle interval (a very large queue) stays ready while the next
// cycle runs as long as the last one did; a cycle that runs on past twice
// that, or past the base bound when cycles are short, is judged stuck and
// says since when.
func TestLongCyclesAreNotStuck(t *testing.T) {
	base := lateCycle(Config{CycleInterval: 10 * time.Second, Debounce: time.Second, ReserveTimeout: 5 * time.Second})
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	long := health{cycleOK: t0, recent: [recentCycles]time.Duration{90 * time.Second}, next: 1}
	if why := long.stuck(t0.Add(base+90*time.Second), base); why != "" {
		t.Errorf("a cycle as long as the last one (90 s, base %s): %q, want ready", base, why)
	}
	if why := long.stuck(t0.Add(base+181*time.Second), base); !strings.Contains(why, "since 08:00:00") {
		t.Errorf("a cycle past twice the last one: %q, want stuck since 08:00:00", why)
	}
	short := health{cycleOK: t0, recent: [recentCycles]time.Duration{200 * time.Millisecond}, next: 1}
	if why := short.stuck(t0.Add(base), base); why != "" {
		t.Errorf("within the base bound: %q", why)
	}
	if why := short.stuck(t0.Add(base+time.Second), base); why == "" {
		t.Error("short cycles, none for longer than the base bound and two of them: judged ready")
	}
	if why := (&health{}).stuck(t0.Add(time.Hour), base); why != "" {
		t.Errorf("before the first cycle: %q (starting is judged elsewhere)", why)
	}
}

// TestCycleDoneKeepsTheLastGoodLength: a failed cycle changes neither the
// last good cycle's time nor its length.
func TestCycleDoneKeepsTheLastGoodLength(t *testing.T) {
	var h health
	h.cycleDone(time.Now().Add(-3*time.Second), nil)
	ok, n := h.cycleOK, h.longest()
	if n < 3*time.Second || n > time.Hour {
		t.Fatalf("length %s, want about 3 s", n)
	}
	h.cycleDone(time.Now().Add(-time.Hour), errors.New("x"))
	if h.cycleOK != ok || h.longest() != n || h.cycleErr == nil {
		t.Fatalf("after a failed cycle: %v %s %v", h.cycleOK, h.longest(), h.cycleErr)
	}
}

// TestAFullCycleAmongShortOnesIsNotStuck: at scale a new forecast
// revision is planned from scratch (minutes) between incremental cycles
// (seconds); the next from-scratch cycle is judged against the last one,
// not against the short cycle before it, until recentCycles short cycles
// have passed since.
func TestAFullCycleAmongShortOnesIsNotStuck(t *testing.T) {
	base := lateCycle(Config{CycleInterval: 10 * time.Second, Debounce: time.Second, ReserveTimeout: 5 * time.Second})
	var h health
	record := func(d time.Duration) {
		h.cycleDone(time.Now().Add(-d), nil)
	}
	record(90 * time.Second) // a cycle from scratch
	for range 10 {
		record(0) // incremental cycles
	}
	end := h.cycleOK
	if why := h.stuck(end.Add(base+150*time.Second), base); why != "" {
		t.Errorf("the next cycle from scratch, as long as the last one, after short cycles: %q, want ready", why)
	}
	if why := h.stuck(end.Add(base+200*time.Second), base); why == "" {
		t.Error("a cycle past twice the longest recent one: judged ready")
	}
	for range recentCycles {
		record(0)
	}
	if why := h.stuck(h.cycleOK.Add(base+10*time.Second), base); why == "" {
		t.Errorf("%d short cycles after the long one: still judged by it", recentCycles)
	}
}

package maui

import (
	"bytes"
	"testing"
)

func TestStepPolicyNext(t *testing.T) {
	p := StepPolicy{Near: 3600, Coarse: 300}
	for _, c := range []struct {
		t, ev   int64
		ok      bool
		horizon int64
		stop    int64
		exact   bool
	}{
		{0, 100, true, 10000, 100, true},
		{100, 3599, true, 10000, 3599, true},
		{100, 3600, true, 10000, 400, false}, // event at the window edge: coarse
		{100, 0, false, 10000, 400, false},   // nothing known: coarse
		{9900, 0, false, 10000, 10000, false},
		{50, 40, true, 10000, 350, false}, // stale event is never a stop
	} {
		stop, exact := p.Next(c.t, c.ev, c.ok, c.horizon)
		if stop != c.stop || exact != c.exact {
			t.Errorf("Next(%d,%d,%v,%d) = %d,%v; want %d,%v", c.t, c.ev, c.ok, c.horizon, stop, exact, c.stop, c.exact)
		}
	}
	if d := (StepPolicy{}).WithDefaults(); d.Near != DefaultNear || d.Coarse != DefaultCoarse {
		t.Errorf("defaults %+v", d)
	}
	if !CanPipeline(100, 150, 60) || CanPipeline(100, 160, 60) {
		t.Error("CanPipeline")
	}
}

// TestPolicyOnExactSchedules replays the policy on Maui's own event-exact
// schedules (sim5): inside the 12 h window every start must fall on a stop
// the policy makes, so the window's schedule is the exact one.
func TestPolicyOnExactSchedules(t *testing.T) {
	for _, c := range []struct {
		file      string
		minStops  int
		wantStops int
	}{
		{"sim5/simstat.exact500.out.gz", 200, 277},
		{"sim5/simstat.exact2000.out.gz", 360, 471},
	} {
		recs, err := ParseWorkload(bytes.NewReader(readFixture(t, c.file)))
		if err != nil {
			t.Fatal(err)
		}
		cost := EvaluatePolicy(recs, StepPolicy{Near: 12 * 3600, Coarse: 300}, 48*3600, 512)
		if cost.MissedStarts != 0 {
			t.Errorf("%s: %d starts inside the window missed", c.file, cost.MissedStarts)
		}
		if cost.ExactStops != c.wantStops || cost.ExactStops < c.minStops {
			t.Errorf("%s: %d exact stops, want %d (distinct ends in 12 h)", c.file, cost.ExactStops, c.wantStops)
		}
		if cost.CoarseStops != (48*3600-12*3600)/300+1 && cost.CoarseStops != (48*3600-12*3600)/300 {
			t.Errorf("%s: %d coarse stops", c.file, cost.CoarseStops)
		}
		t.Logf("%s: %+v", c.file, cost)
		// A coarser window must miss nothing it covers and cost fewer stops.
		small := EvaluatePolicy(recs, StepPolicy{Near: 3600, Coarse: 300}, 48*3600, 512)
		if small.ExactStops >= cost.ExactStops || small.MissedStarts != 0 {
			t.Errorf("%s: 1 h window %+v", c.file, small)
		}
	}
}

// TestFixedStepMissesExactStarts: the same replay with no window (a fixed
// step everywhere) leaves almost every start off the grid, the reason fixed
// steps distort the forecast.
func TestFixedStepMissesExactStarts(t *testing.T) {
	recs, err := ParseWorkload(bytes.NewReader(readFixture(t, "sim5/simstat.exact500.out.gz")))
	if err != nil {
		t.Fatal(err)
	}
	cost := EvaluatePolicy(recs, StepPolicy{Near: -1, Coarse: 60}, 48*3600, 512)
	if cost.ExactStops != 0 || cost.GridLowerBound <= 0 || cost.GridLowerBound >= 60 {
		t.Errorf("fixed 60 s: %+v", cost)
	}
}

func TestResourceProcs(t *testing.T) {
	for file, want := range map[string]int{"sim5/resource64.trace": 512, "sim1/traces/resource.trace": 16, "sim4/traces/resource.trace": 8} {
		got, err := ResourceProcs(readFixture(t, file))
		if err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", file, got, err, want)
		}
	}
	if _, err := ResourceProcs([]byte("COMPUTENODE AVAILABLE 0 n01\n")); err == nil {
		t.Error("short record accepted")
	}
}

// TestFreeProcsBoundCutsReads: counting only jobs that fit in the free
// processors as possibly started unseen makes fewer state reads necessary,
// and never misses a start.
func TestFreeProcsBoundCutsReads(t *testing.T) {
	recs, err := ParseWorkload(bytes.NewReader(readFixture(t, "sim5/simstat.exact500.out.gz")))
	if err != nil {
		t.Fatal(err)
	}
	p := StepPolicy{Near: 12 * 3600, Coarse: 300}
	loose, tight := EvaluatePolicy(recs, p, 48*3600, 0), EvaluatePolicy(recs, p, 48*3600, 512)
	if tight.SoloReads >= loose.SoloReads || tight.MissedStarts != 0 || loose.SoloReads != 82 {
		t.Errorf("loose %+v tight %+v", loose, tight)
	}
}

package broker

import (
	"math/rand/v2"
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

// capacity is the node's usable processors at instant t (DESIGN.md).
func capacity(slots []forecast.Slot, node string, t int64) int {
	n := 0
	for _, s := range slots {
		if s.Node == node && s.Start <= t && t < s.End {
			n += s.Procs
		}
	}
	return n
}

func TestSubtractTakesExactlyWhatIsHeld(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 500; iter++ {
		var slots []forecast.Slot
		for k := 0; k < 1+rng.IntN(5); k++ {
			a := int64(rng.IntN(100))
			slots = append(slots, forecast.Slot{Node: []string{"x", "y"}[rng.IntN(2)], Procs: 1 + rng.IntN(4),
				Start: a, End: a + 1 + int64(rng.IntN(50)), Price: float64(rng.IntN(3))})
		}
		start := int64(rng.IntN(100))
		end := start + 1 + int64(rng.IntN(50))
		take := map[string]int{"x": 1 + rng.IntN(5)}
		got := Subtract(slots, take, start, end)
		for tt := int64(0); tt < 160; tt++ {
			for _, node := range []string{"x", "y"} {
				before, after := capacity(slots, node, tt), capacity(got, node, tt)
				want := before
				if node == "x" && tt >= start && tt < end {
					want = max(0, before-take["x"])
				}
				if after != want {
					t.Fatalf("iter %d node %s t=%d: %d procs left, want %d (before %d, take %d over [%d,%d))\nslots %v\ngot %v",
						iter, node, tt, after, want, before, take[node], start, end, slots, got)
				}
			}
		}
		for _, s := range got {
			if s.End <= s.Start || s.Procs <= 0 {
				t.Fatalf("degenerate slot %+v", s)
			}
		}
	}
}

func TestApplyHoldsOnlyOnOlderRevisions(t *testing.T) {
	f := forecast.Forecast{Site: "a", Seq: 5, Slots: []forecast.Slot{{Node: "n1", Procs: 8, Start: 0, End: 1000, Price: 1}}}
	hold := Hold{Alloc: forecast.Allocation{Job: "g1", Start: 100, End: 200, Parts: []forecast.Part{{Site: "a", Node: "n1", Procs: 8}}},
		Revisions: map[string]uint64{"a": 5}}
	got := ApplyHolds([]forecast.Forecast{f}, []Hold{hold}, 0)
	if c := capacity(got[0].Slots, "n1", 150); c != 0 {
		t.Fatalf("held interval still offers %d procs", c)
	}
	if c := capacity(got[0].Slots, "n1", 250); c != 8 {
		t.Fatalf("after the hold %d procs, want 8", c)
	}
	if len(f.Slots) != 1 || f.Slots[0].End != 1000 {
		t.Fatal("input forecast modified")
	}
	newer := f
	newer.Seq = 6
	got = ApplyHolds([]forecast.Forecast{newer}, []Hold{hold}, 0)
	if c := capacity(got[0].Slots, "n1", 150); c != 8 {
		t.Fatalf("a newer forecast (which already excludes the reservation) was cut again: %d", c)
	}
	got = ApplyHolds([]forecast.Forecast{f}, []Hold{hold}, 300)
	if c := capacity(got[0].Slots, "n1", 150); c != 8 {
		t.Fatalf("an ended hold still cut the forecast")
	}
}

func TestPlanCycleUsesHoldsAndChecksPlanner(t *testing.T) {
	f := forecast.Forecast{Site: "a", Seq: 1, Slots: []forecast.Slot{{Node: "n1", Procs: 8, Start: 0, End: 1000}}}
	hold := Hold{Alloc: forecast.Allocation{Start: 0, End: 1000, Parts: []forecast.Part{{Site: "a", Node: "n1", Procs: 8}}},
		Revisions: map[string]uint64{"a": 1}}
	var seen []forecast.Forecast
	planner := func(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) ([]forecast.Allocation, error) {
		seen = fcs
		return make([]forecast.Allocation, len(jobs)), nil
	}
	_, err := PlanCycle(CycleInput{Now: 5, Forecasts: []forecast.Forecast{f}, Holds: []Hold{hold},
		Jobs: []forecast.JobRequest{{ID: "g2"}}}, planner)
	if err != nil {
		t.Fatal(err)
	}
	if c := capacity(seen[0].Slots, "n1", 500); c != 0 {
		t.Fatalf("planner saw %d held procs", c)
	}
	bad := func([]forecast.Forecast, []forecast.JobRequest, int64) ([]forecast.Allocation, error) {
		return nil, nil
	}
	if _, err := PlanCycle(CycleInput{Forecasts: []forecast.Forecast{f}, Jobs: []forecast.JobRequest{{ID: "g2"}}}, bad); err == nil {
		t.Fatal("planner returning too few allocations accepted")
	}
	out, _ := PlanCycle(CycleInput{Jobs: []forecast.JobRequest{{ID: "g2"}}}, bad)
	if len(out) != 1 || out[0].Error == "" {
		t.Fatalf("no fresh sites: %+v", out)
	}
}

// A site extends a reservation by its slack past the planned end
// (docs/agent.md); until its next forecast shows the reservation, the hold
// keeps the slack too. Without it the next job was planned into the slack
// and the site refused it as stale (seen on a Slurm site: a 1-minute job
// reserved until 03:43:07, the next planned at its planned end 03:40:02).
func TestHoldKeepsTheSlackOfItsReservations(t *testing.T) {
	j := &Job{Alloc: &forecast.Allocation{Job: "g1", Start: 100, End: 200, Parts: []forecast.Part{
		{Site: "a", Node: "n1", Procs: 8}, {Site: "b", Node: "m1", Procs: 4}}},
		Revisions:    map[string]uint64{"a": 5, "b": 7},
		Reservations: []wire.Reservation{{Site: "a", Start: 100, End: 500}, {Site: "b", Start: 100, End: 200}}}
	fa := forecast.Forecast{Site: "a", Seq: 5, Slots: []forecast.Slot{{Node: "n1", Procs: 8, Start: 0, End: 1000, Price: 1}}}
	fb := forecast.Forecast{Site: "b", Seq: 7, Slots: []forecast.Slot{{Node: "m1", Procs: 4, Start: 0, End: 1000, Price: 1}}}
	got := ApplyHolds([]forecast.Forecast{fa, fb}, []Hold{j.Hold()}, 0)
	for _, c := range []struct {
		f    int
		node string
		at   int64
		want int
	}{{0, "n1", 150, 0}, {0, "n1", 300, 0}, {0, "n1", 500, 8}, {1, "m1", 150, 0}, {1, "m1", 300, 4}} {
		if n := capacity(got[c.f].Slots, c.node, c.at); n != c.want {
			t.Errorf("%s at %d: %d procs offered, want %d", c.node, c.at, n, c.want)
		}
	}
	// Past the planned end, in the slack: still held.
	if n := capacity(ApplyHolds([]forecast.Forecast{fa}, []Hold{j.Hold()}, 300)[0].Slots, "n1", 400); n != 0 {
		t.Errorf("the slack was offered once the planned end had passed: %d procs", n)
	}
}

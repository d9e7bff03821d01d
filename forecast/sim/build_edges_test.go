package sim

import (
	"math"
	"strings"
	"testing"

	"lookahead/forecast"
)

// freeOn sums the processor-seconds a forecast offers on node at price.
func freeOn(f forecast.Forecast, node string, price float64) int64 {
	var sum int64
	for _, s := range f.Slots {
		if s.Node == node && s.Price == price {
			sum += int64(s.Procs) * (s.End - s.Start)
		}
	}
	return sum
}

// Issue 23.5: a job in a state Torque does not have was dropped and its
// node sold as free; it is taken as running and named.
func TestBuildUnknownStateHoldsItsProcessors(t *testing.T) {
	const now = 1000
	snap := forecast.Snapshot{Site: "alpha", Taken: now,
		Nodes: []forecast.SnapshotNode{{Name: "n1", Procs: 8, State: []string{forecast.NodeFree}, Speed: 1}},
		Jobs: []forecast.LocalJob{{ID: "z1", State: "Z", Procs: 8, Walltime: 600, Started: now - 100,
			Hosts: []forecast.HostProcs{{Node: "n1", Procs: 8}}}}}
	f, preds, err := Build(snap, now, now+3600, EASY, forecast.DefaultPricing())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := freeOn(f, "n1", 1), int64(8*(3600-500)); got != want {
		t.Fatalf("free processor-seconds on n1: %d, want %d (z1 holds it until %d): %+v", got, want, now+500, f.Slots)
	}
	if len(preds) != 1 || preds[0].Job != "z1" || preds[0].End != now+500 {
		t.Fatalf("predictions %+v, want z1 running until %d", preds, now+500)
	}
	if len(f.Unmodelled) != 1 || !strings.Contains(f.Unmodelled[0], `z1 (state "Z")`) || !strings.HasPrefix(f.Unmodelled[0], "1 jobs") {
		t.Fatalf("unmodelled %q, want the job named and counted", f.Unmodelled)
	}
}

// Issue 23.1: a running job with walltime 2^63-1 (a snapshot that did not
// go through Validate, as the agent's Torque path) ended at a negative
// time and its node was sold as free; its walltime now counts as the
// model's longest.
func TestBuildHugeWalltimeHoldsToTheHorizon(t *testing.T) {
	const now = 1763780000
	for _, state := range []string{forecast.JobRunning, forecast.JobQueued} {
		snap := forecast.Snapshot{Site: "alpha", Taken: now,
			Nodes: []forecast.SnapshotNode{{Name: "n1", Procs: 8, State: []string{forecast.NodeFree}, Speed: 1}},
			Jobs:  []forecast.LocalJob{{ID: "big", State: state, Procs: 8, Walltime: math.MaxInt64, Started: now - 10, Submitted: now - 20}}}
		if state == forecast.JobRunning {
			snap.Jobs[0].Hosts = []forecast.HostProcs{{Node: "n1", Procs: 8}}
		}
		f, preds, err := Build(snap, now, now+48*3600, EASY, forecast.DefaultPricing())
		if err != nil {
			t.Fatal(err)
		}
		if got := freeOn(f, "n1", 1); got != 0 {
			t.Errorf("%s: %d processor-seconds offered as free time on a node the job holds", state, got)
		}
		for _, p := range preds {
			if p.End < p.Start || p.End < now {
				t.Errorf("%s: prediction %+v ends before it starts", state, p)
			}
		}
		if err := f.Validate(); err != nil {
			t.Errorf("%s: %v", state, err)
		}
	}
}

func TestBuildRefusesTimesOutsideTheModel(t *testing.T) {
	snap := forecast.Snapshot{Site: "alpha"}
	for _, c := range [][2]int64{{-1, 10}, {0, forecast.MaxInstant + 1}, {10, 5}} {
		if _, _, err := Build(snap, c[0], c[1], EASY, forecast.DefaultPricing()); err == nil || !strings.Contains(err.Error(), "horizon") {
			t.Errorf("now %d, horizon %d: %v", c[0], c[1], err)
		}
	}
}

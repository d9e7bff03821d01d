package sim

import (
	"testing"

	"lookahead/forecast"
)

// TestNodeAvail checks a node's backfill available time against the rules
// copied from Maui's range code (docs/simulator.md, "A pass", step 4),
// computed by hand. One 8-processor node at t=0; a 2-processor job held
// until 100 and a 3-processor job held until endB run on it, so 3 are free
// now; a blocked job's reservation may take some of it from holdAt.
func TestNodeAvail(t *testing.T) {
	cases := []struct {
		name            string
		endB            int64
		holdAt, holdEnd int64
		hold            int
		want            int64
	}{
		// count grows at 100 (joined), changes again at 150
		{"grows twice", 150, 0, 0, 0, 150},
		// grows at 100 and never changes again
		{"grows once", 100, 0, 0, 0, never},
		// at 100 jobs end and a hold of 3 starts: 3 → 5 is not recorded;
		// at 200 the hold ends, 8 > 3 splits, joined: no end
		{"grow at a hold start is not recorded", 100, 100, 200, 3, never},
		// a hold starting at 50 cuts the count below the first range's
		{"drop", 150, 50, 400, 1, 50},
		// a hold starting at 50 takes everything left
		{"exhausted", 150, 50, 400, 3, 50},
		// grows at 100 (joined); the drop at 120 ends the second range
		{"grow then drop", 150, 120, 400, 2, 120},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewEngine(UniformCluster(1, 8), EASY, 0)
			host := []forecast.HostProcs{{Node: e.nodes[0].name, Procs: 2}}
			if err := e.AddRunning(Job{ID: "a", Procs: 2, Walltime: 100, Runtime: -1}, 0, host); err != nil {
				t.Fatal(err)
			}
			host[0].Procs = 3
			if err := e.AddRunning(Job{ID: "b", Procs: 3, Walltime: c.endB, Runtime: -1}, 0, host); err != nil {
				t.Fatal(err)
			}
			if c.hold > 0 {
				b := e.newBlocked(c.holdAt, c.holdEnd)
				b.per[0] = c.hold
				b.touched = append(b.touched, 0)
			}
			if got := e.nodeAvail(0); got != c.want {
				t.Errorf("nodeAvail = %d, want %d", got, c.want)
			}
			e.dropBlockedHolds()
		})
	}
}

package replay

import (
	"testing"

	"lookahead/forecast"
	"lookahead/forecast/sim"
)

// TestEngineAcceptsNonConcurrentReservations documents what the replay
// relies on: reservations that never overlap in time beyond a node's
// processors are accepted.
func TestEngineAcceptsNonConcurrentReservations(t *testing.T) {
	e := sim.NewEngine(sim.UniformCluster(1, 10), sim.EASY, 0)
	h := func(p int) []forecast.HostProcs { return []forecast.HostProcs{{Node: "n0001", Procs: p}} }
	for _, r := range []forecast.Reservation{
		{ID: "a", Start: 0, End: 100, Hosts: h(5)},
		{ID: "b", Start: 100, End: 200, Hosts: h(5)},
		{ID: "c", Start: 50, End: 150, Hosts: h(5)},
	} {
		if err := e.Reserve(r); err != nil {
			t.Fatalf("engine refuses a feasible reservation (at most 10 of 10 processors held at any instant): %v", err)
		}
	}
}

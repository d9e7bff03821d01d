package sim

import (
	"errors"
	"testing"

	"lookahead/forecast"
)

// Reservations that follow one another in time share a node's processors;
// only what is held at one instant counts against a new one.
func TestReserveCountsConcurrentHoldsOnly(t *testing.T) {
	e := NewEngine(UniformCluster(1, 10), EASY, 0)
	h := func(p int) []forecast.HostProcs { return []forecast.HostProcs{{Node: "n0001", Procs: p}} }
	for _, r := range []forecast.Reservation{
		{ID: "a", Start: 0, End: 100, Hosts: h(5)},
		{ID: "b", Start: 100, End: 200, Hosts: h(5)},
		{ID: "c", Start: 50, End: 150, Hosts: h(5)}, // 10 held at any instant of [50, 150)
	} {
		if err := e.Reserve(r); err != nil {
			t.Fatalf("%s refused: %v", r.ID, err)
		}
	}
	// One more processor anywhere in [50, 150) is more than the node has.
	err := e.Reserve(forecast.Reservation{ID: "d", Start: 120, End: 130, Hosts: h(1)})
	if !errors.Is(err, ErrNoCapacity) {
		t.Fatalf("d: %v, want ErrNoCapacity", err)
	}
	// After 200 the node is free again.
	if err := e.Reserve(forecast.Reservation{ID: "e", Start: 200, End: 300, Hosts: h(10)}); err != nil {
		t.Fatalf("e refused: %v", err)
	}
}

package sim

import (
	"testing"

	"lookahead/forecast"
)

// A job never spans partitions: with n0001, n0002 in p1 and n0003, n0004
// in DEFAULT (2 processors each), a 3-processor job runs in DEFAULT (the
// first call's partition) and the next one in p1 (its reservation is
// earliest there: now), leaving 1 free processor in each; a 2-processor
// job fits the 2 free processors only across both, so it waits for a
// partition to empty (without partitions it starts at once).
func TestPartitionJobNeverSpans(t *testing.T) {
	c := UniformCluster(4, 2)
	mc := readCfg(t, "NODECFG[n0001] PARTITION=p1\nNODECFG[n0002] PARTITION=p1\n")
	jobs := []Job{
		{ID: "a", Procs: 3, Walltime: 100, Runtime: 100, Submit: 0},
		{ID: "b", Procs: 3, Walltime: 200, Runtime: 200, Submit: 0},
		{ID: "w", Procs: 2, Walltime: 50, Runtime: 50, Submit: 1},
	}
	res, err := Run(c, jobs, mc.Policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(c, jobs, res); err != nil {
		t.Fatal(err)
	}
	got := map[string]JobResult{}
	for _, r := range res.Jobs {
		got[r.ID] = r
	}
	if got["a"].Start != 0 || got["b"].Start != 0 {
		t.Fatalf("a, b start at %d, %d; want 0", got["a"].Start, got["b"].Start)
	}
	w := got["w"]
	if w.Start != 100 {
		t.Errorf("w starts at %d on %v, want 100 (when a's partition empties)", w.Start, w.Hosts)
	}
	part := map[string]string{"n0001": "p1", "n0002": "p1", "n0003": "DEFAULT", "n0004": "DEFAULT"}
	for _, id := range []string{"a", "b", "w"} {
		seen := map[string]bool{}
		for _, h := range got[id].Hosts {
			seen[part[h.Node]] = true
		}
		if len(seen) != 1 {
			t.Errorf("%s spans partitions: %v", id, got[id].Hosts)
		}
	}
}

// A job the DEFAULT pass cannot start gets a reservation starting now in
// p1 and starts in p1's pass on that reservation's nodes (Maui's
// MJobAllocMNL gives the job's own reservation affinity), not where
// LASTAVAILABLE would put a new job: with a grid reservation later on
// n0002, LASTAVAILABLE ranks n0001 (free for ever) first, while the
// reservation (taken in the reverse node order) holds n0002.
func TestPartitionStartsOnOwnReservation(t *testing.T) {
	c := UniformCluster(4, 2)
	mc := readCfg(t, "NODEALLOCATIONPOLICY LASTAVAILABLE\nNODECFG[n0001] PARTITION=p1\nNODECFG[n0002] PARTITION=p1\n")
	e := NewEngine(c, mc.Policy, 0)
	if err := e.Reserve(forecast.Reservation{ID: "g", Start: 10000, End: 20000, Hosts: []forecast.HostProcs{{Node: "n0002", Procs: 1}}}); err != nil {
		t.Fatal(err)
	}
	e.Submit(Job{ID: "a", Procs: 4, Walltime: 100000, Runtime: 100000, Submit: 0})
	e.Submit(Job{ID: "x", Procs: 1, Walltime: 5000, Runtime: 5000, Submit: 0})
	hosts := map[string]string{}
	for _, ev := range e.AdvanceTo(1) {
		if ev.Kind == Started {
			for _, h := range ev.Hosts {
				hosts[ev.Job] += h.Node
			}
		}
	}
	if hosts["a"] == "" || hosts["x"] == "" {
		t.Fatalf("started %v, want a and x at 0", hosts)
	}
	if hosts["x"] != "n0002" {
		t.Errorf("x runs on %s, want n0002 (its reservation's node)", hosts["x"])
	}
}

package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"lookahead/forecast"
)

// randomNodeState builds an engine at t=1000 on a few nodes with running
// jobs (started in the past, walltimes ending in the future), grid
// reservations and blocked-job reservations, all at coarse times so that
// instants coincide often.
func randomNodeState(rng *rand.Rand) *Engine {
	nodes := make([]forecast.SnapshotNode, 1+rng.IntN(3))
	for i := range nodes {
		nodes[i] = forecast.SnapshotNode{Name: fmt.Sprintf("n%d", i), Procs: 1 + rng.IntN(8), State: []string{forecast.NodeFree}}
	}
	e := NewEngine(Cluster{Nodes: nodes}, EASY, 1000)
	at := func() int64 { return 1000 + 100*int64(rng.IntN(12)) }
	for k := 0; k < rng.IntN(6); k++ {
		i := rng.IntN(len(nodes))
		free := e.nodes[i].procs - e.nodes[i].used
		if free <= 0 {
			continue
		}
		p := 1 + rng.IntN(free)
		start := 1000 - 100*int64(rng.IntN(5))
		wall := at() - start + 100
		_ = e.AddRunning(Job{ID: fmt.Sprintf("r%d", k), Procs: p, Walltime: wall, Runtime: -1}, start, []forecast.HostProcs{{Node: nodes[i].Name, Procs: p}})
	}
	for k := 0; k < rng.IntN(4); k++ {
		i := rng.IntN(len(nodes))
		s := at()
		_ = e.Reserve(forecast.Reservation{ID: fmt.Sprintf("g%d", k), Start: s, End: s + 100*int64(1+rng.IntN(5)),
			Hosts: []forecast.HostProcs{{Node: nodes[i].Name, Procs: 1 + rng.IntN(e.nodes[i].procs)}}})
	}
	for k := 0; k < rng.IntN(4); k++ {
		s := at()
		b := e.newBlocked(s, s+100*int64(1+rng.IntN(6)))
		i := rng.IntN(len(nodes))
		b.per[i] = 1 + rng.IntN(e.nodes[i].procs)
		b.touched = append(b.touched, i)
	}
	return e
}

// TestNodeProbeMatchesFastPaths checks the port of Maui's range code
// against the simulator's direct computations it must agree with: a job
// starting now gets on a node the fewest processors it keeps free over
// the walltime (nodeFree), and a backfill window's node is available until
// nodeAvail says.
func TestNodeProbeMatchesFastPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var withHolds, dips, windows int
	defer func() {
		t.Logf("%d nodes with holds, %d where a hold lowers the count, %d finite windows", withHolds, dips, windows)
	}()
	for n := 0; n < 3000; n++ {
		e := randomNodeState(rng)
		for i := range e.nodes {
			ev := append([]nevent(nil), e.nodeEvents(i)...)
			d := 100 * int64(1+rng.IntN(10))
			procs := 1 + rng.IntN(12)
			tasks, window, ok := e.nodeProbe(i, ev, procs, 0, d)
			free := e.nodeFree(i, e.now+d)
			if len(e.nodes[i].holds) > 0 || len(ev) > 2*len(e.nodes[i].run) {
				withHolds++
				if free < e.nodes[i].procs-e.nodes[i].used {
					dips++
				}
			}
			fits := ok && window >= d
			if fits != (free > 0) || (fits && tasks != free) {
				t.Fatalf("state %d node %d (procs %d, used %d) job %d×%ds: probe %d tasks for %ds (ok %v), nodeFree %d; events %+v",
					n, i, e.nodes[i].procs, e.nodes[i].used, procs, d, tasks, window, ok, free, ev)
			}
			if e.nodes[i].used >= e.nodes[i].procs {
				continue
			}
			_, w, ok := e.nodeProbe(i, ev, 1, 0, 1)
			avail := e.nodeAvail(i)
			want := int64(0)
			switch {
			case avail == never:
				want = rangeEnd - e.now
			case avail > 0:
				want = avail - e.now
			}
			if !ok {
				w = 0
			}
			if want > 0 && want < rangeEnd-e.now {
				windows++
			}
			if w != want {
				t.Fatalf("state %d node %d: probe window %d, nodeAvail %d (now %d); events %+v", n, i, w, avail, e.now, ev)
			}
		}
	}
}

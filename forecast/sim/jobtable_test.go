package sim

import (
	"strings"
	"testing"
)

func tableNames(t jobTable) string {
	var b []string
	for _, x := range t {
		if x == jlGap {
			b = append(b, "_")
		} else {
			b = append(b, x.ID)
		}
	}
	return strings.Join(b, " ")
}

// MJobAddToNL fills the first empty slot and ends the table after it, so
// what was listed after that slot drops out until it is added again.
func TestJobTableLosesEntries(t *testing.T) {
	a, b, c, d := &job{Job: Job{ID: "a"}}, &job{Job: Job{ID: "b"}}, &job{Job: Job{ID: "c"}}, &job{Job: Job{ID: "d"}}
	var tb jobTable
	tb = tb.add(a).add(b).add(c)
	tb = tb.add(b) // found: nothing changes
	if got := tableNames(tb); got != "a b c" {
		t.Fatalf("table %q, want a b c", got)
	}
	tb.remove(a)
	tb = tb.add(d)
	if got := tableNames(tb); got != "d" {
		t.Fatalf("d into a's empty slot: %q, want d alone (b and c cut off)", got)
	}
	tb = tb.add(c).add(b)
	if got := tableNames(tb); got != "d c b" {
		t.Fatalf("added again: %q, want d c b", got)
	}
}

// A node's own MAXPROC caps its job slots (N->ARes), which Maui's ranges
// count on a node with no reservation from now: a reservation's ranges
// from now give the idle node its slots, from a later time (the second
// look) its processors; NODECFG[DEFAULT]'s MAXPROC does not count there.
func TestNodeSlotsInRanges(t *testing.T) {
	mc := readCfg(t, "RESERVATIONDEPTH 2\nNODECFG[n0001] MAXPROC=3\nNODECFG[DEFAULT] MAXPROC=2\n")
	e := NewEngine(UniformCluster(2, 8), mc.Policy, 0)
	q := rangeQuery{s: 0, e: rangeEnd, k: 1, d: 100, t: 1, count: maxRanges}
	for _, c := range []struct {
		node int
		s    int64
		want int
	}{{0, 0, 3}, {0, 50, 8}, {1, 0, 8}} {
		q.s = c.s
		ar, ok := e.snRange(c.node, nil, q, nil)
		if !ok || ar[0].tc != c.want {
			t.Errorf("node %d from %d: %v %v, want %d tasks", c.node, c.s, ar, ok, c.want)
		}
	}
}

// The first reservation of a pass (holdAt, nothing reserved yet): an
// idle node counts its slots when Maui decides whether the job fits at a
// time (its ranges from now), and its processors when booked at a later
// time. n0003 runs 4 tasks until +1000; n0002 (MAXPROC=4) and n0001 are
// idle: an 18-task job does not fit now (4 + 8 + 4 = 16), fits at +1000
// (4 + 8 + 8), and books 8 on n0002 there.
func TestNodeSlotsFirstReservation(t *testing.T) {
	mc := readCfg(t, "RESERVATIONDEPTH 1\nNODECFG[n0002] MAXPROC=4\n")
	e := NewEngine(UniformCluster(3, 8), mc.Policy, 0)
	e.Submit(Job{ID: "run", Procs: 4, Walltime: 1000, Runtime: 1000, Submit: 0})
	e.AdvanceTo(0)
	if len(e.nodes[2].run) != 1 {
		t.Fatalf("the running job is not on n0003 (MINRESOURCE): %+v", e.nodes)
	}
	big := &job{Job: Job{ID: "big", Procs: 18, Walltime: 500}}
	if e.holdAt(big, 0) {
		t.Fatal("fits now: n0002 counted beyond its 4 slots")
	}
	if !e.holdAt(big, 1000) {
		t.Fatal("does not fit at +1000")
	}
	b := e.blocked[len(e.blocked)-1]
	if b.per[1] != 8 || b.booked() != 18 {
		t.Errorf("booked %v, want 8 on n0002 (its processors at +1000) and 18 in all", b.per)
	}
}

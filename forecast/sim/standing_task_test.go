package sim

import "testing"

// A standing reservation of TASKCOUNT=2 whole nodes and no HOSTLIST
// holds two nodes for ever (PERIOD=INFINITY): of two 4-processor jobs on
// 4 × 2 processors, the second waits for the first (it used to start at
// once: the window held nothing).
func TestStandingTaskCountHoldsNodes(t *testing.T) {
	c := UniformCluster(4, 2)
	mc := readCfg(t, "SRCFG[pool] PERIOD=INFINITY TASKCOUNT=2\n")
	if len(mc.Unmodelled) != 1 {
		t.Fatalf("Unmodelled %q, want the TASKCOUNT note only", mc.Unmodelled)
	}
	jobs := []Job{
		{ID: "a", Procs: 4, Walltime: 100, Runtime: 100, Submit: 0},
		{ID: "b", Procs: 4, Walltime: 100, Runtime: 100, Submit: 0},
	}
	got := runVerified(t, c, jobs, mc.Policy)
	if got["a"].Start != 0 || got["b"].Start != 100 {
		t.Fatalf("a, b start at %d, %d; want 0, 100", got["a"].Start, got["b"].Start)
	}
	// the window takes the first nodes of the MINRESOURCE order, the
	// jobs run on the other two
	e := NewEngine(c, mc.Policy, 0)
	held := map[string]bool{}
	for _, h := range e.srs[0].hosts {
		held[e.nodes[h.node].name] = true
		if h.procs != 2 {
			t.Errorf("window holds %d processors of %s, want the whole node", h.procs, e.nodes[h.node].name)
		}
	}
	if len(held) != 2 {
		t.Fatalf("window holds %v, want two nodes", held)
	}
	for _, id := range []string{"a", "b"} {
		for _, h := range got[id].Hosts {
			if held[h.Node] {
				t.Errorf("%s runs on %s, inside the window", id, h.Node)
			}
		}
	}
}

// RESOURCES=PROCS:k makes a task k processors: TASKCOUNT=3 of PROCS:1 on
// 2-processor nodes takes a whole node and half of the next.
func TestStandingTaskCountTasks(t *testing.T) {
	c := UniformCluster(4, 2)
	mc := readCfg(t, "SRCFG[pool] PERIOD=INFINITY TASKCOUNT=3 RESOURCES=PROCS:1\n")
	e := NewEngine(c, mc.Policy, 0)
	total := 0
	for _, h := range e.srs[0].hosts {
		total += h.procs
	}
	if len(e.srs[0].hosts) != 2 || total != 3 {
		t.Errorf("window hosts %+v, want 3 processors on 2 nodes", e.srs[0].hosts)
	}
}

package sim

import (
	"sort"
	"testing"
)

// checkReplay asserts the invariants every replay must hold: no node over
// its processors at any instant, no start before submit, runs end by their
// walltime, every job either ran or was rejected.
func checkReplay(t *testing.T, c Cluster, jobs []Job, res Result) {
	t.Helper()
	if len(res.Stuck) > 0 {
		t.Errorf("jobs never started: %v", res.Stuck)
	}
	if got := len(res.Jobs) + len(res.Rejected); got != len(jobs) {
		t.Errorf("%d jobs in, %d ran + %d rejected", len(jobs), len(res.Jobs), len(res.Rejected))
	}
	cap := map[string]int{}
	for _, n := range c.Nodes {
		cap[n.Name] = n.Procs
	}
	type ev struct {
		t     int64
		node  string
		delta int
	}
	var evs []ev
	for _, j := range res.Jobs {
		if j.Start < j.Submit {
			t.Errorf("job %s starts at %d before its submit %d", j.ID, j.Start, j.Submit)
		}
		if j.End-j.Start > j.Walltime || j.End < j.Start {
			t.Errorf("job %s runs [%d, %d), walltime %d", j.ID, j.Start, j.End, j.Walltime)
		}
		sum := 0
		for _, h := range j.Hosts {
			sum += h.Procs
			if j.End > j.Start {
				evs = append(evs, ev{j.Start, h.Node, h.Procs}, ev{j.End, h.Node, -h.Procs})
			}
		}
		if j.Hosts != nil && sum != j.Procs {
			t.Errorf("job %s holds %d processors, asked %d", j.ID, sum, j.Procs)
		}
	}
	sort.Slice(evs, func(a, b int) bool {
		if evs[a].t != evs[b].t {
			return evs[a].t < evs[b].t
		}
		return evs[a].delta < evs[b].delta
	})
	used := map[string]int{}
	for _, e := range evs {
		used[e.node] += e.delta
		if used[e.node] > cap[e.node] {
			t.Fatalf("node %s holds %d > %d processors at %d", e.node, used[e.node], cap[e.node], e.t)
		}
	}
}

func startsOf(res Result) map[string]int64 {
	m := map[string]int64{}
	for _, j := range res.Jobs {
		m[j.ID] = j.Start
	}
	return m
}

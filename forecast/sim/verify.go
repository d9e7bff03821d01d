package sim

import (
	"cmp"
	"fmt"
	"slices"
)

// Verify checks the invariants every replay must hold and returns the first
// violation: every job either ran or was rejected (none stuck), no job
// starts before its submit or runs past its walltime, a job holds exactly
// the processors it asked for — or, asking whole chunks per node, whole
// chunks on each node, possibly fewer (Maui starts such a job short,
// JobResult.Held) — and no node ever holds more processors than it has.
func Verify(c Cluster, jobs []Job, res Result) error {
	ppn := make(map[string]int, len(jobs))
	for _, j := range jobs {
		ppn[j.ID] = j.PPN
	}
	if len(res.Stuck) > 0 {
		return fmt.Errorf("%d jobs never started (first %s)", len(res.Stuck), res.Stuck[0])
	}
	if got := len(res.Jobs) + len(res.Rejected); got != len(jobs) {
		return fmt.Errorf("%d jobs in, %d ran + %d rejected", len(jobs), len(res.Jobs), len(res.Rejected))
	}
	capacity := map[string]int{}
	for _, n := range c.Nodes {
		capacity[n.Name] = n.Procs
	}
	type change struct {
		t     int64
		node  string
		delta int
	}
	var evs []change
	for _, j := range res.Jobs {
		if j.Start < j.Submit {
			return fmt.Errorf("job %s starts at %d before its submit %d", j.ID, j.Start, j.Submit)
		}
		if j.End < j.Start || j.End-j.Start > j.Walltime {
			return fmt.Errorf("job %s runs [%d, %d) with walltime %d", j.ID, j.Start, j.End, j.Walltime)
		}
		sum := 0
		for _, h := range j.Hosts {
			sum += h.Procs
			if j.End > j.Start {
				evs = append(evs, change{j.Start, h.Node, h.Procs}, change{j.End, h.Node, -h.Procs})
			}
		}
		if j.Hosts != nil && sum != j.HeldProcs() {
			return fmt.Errorf("job %s holds %d processors, %d recorded", j.ID, sum, j.HeldProcs())
		}
		if err := checkHeld(j, ppn[j.ID]); err != nil {
			return err
		}
	}
	slices.SortFunc(evs, func(a, b change) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.delta, b.delta)
	})
	used := map[string]int{}
	for _, e := range evs {
		used[e.node] += e.delta
		if used[e.node] > capacity[e.node] {
			return fmt.Errorf("node %s holds %d processors > %d at %d", e.node, used[e.node], capacity[e.node], e.t)
		}
	}
	return nil
}

// checkHeld checks what job j held against what it asked for: all of it,
// or, asking whole chunks of ppn per node, fewer (Held) in whole chunks on
// each node.
func checkHeld(j JobResult, ppn int) error {
	if j.Held == 0 {
		return nil
	}
	if ppn <= 0 || j.Held >= j.Procs {
		return fmt.Errorf("job %s holds %d processors, asked for %d", j.ID, j.Held, j.Procs)
	}
	for _, h := range j.Hosts {
		if h.Procs%ppn != 0 {
			return fmt.Errorf("job %s holds %d processors on %s, not whole chunks of ppn=%d", j.ID, h.Procs, h.Node, ppn)
		}
	}
	return nil
}

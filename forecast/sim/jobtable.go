package sim

import (
	"cmp"
	"slices"
)

// Maui 3.3.1's per-node job table (N->JList, MNode.c), which
// MNodeCheckPolicies walks to count the jobs and tasks on a node for its
// MAXPROC and MAXPROCPERUSER (nodeAllows). It loses entries:
//
//   - MJobRemoveFromNL (a job's end) marks its slot empty;
//   - MJobAddToNL walks the table up to its end (NULL) looking for the
//     job, remembering the first empty slot; not finding it, it puts the
//     job into that slot, or at the end, and writes the end marker
//     right after it, so every job listed after an empty slot it fills
//     drops out of the table;
//   - MSimRMGetInfo, at every iteration, goes through every running job in
//     creation order, those ending then included, adding it again
//     (MJobAddToNL finds it, or puts a job that dropped out back in,
//     maybe cutting off others), and then removes the jobs that ended
//     ("completing jobs"); a job starting is added (MJobStart).
//
// Seen in a real Maui (nodemaxproc, LOGLEVEL 7, +6241 s): n048 (MAXPROC 4)
// ran j0062 (1 task); j0069 started there with 2 tasks, filling the empty
// slot before j0062 and cutting it off (checknode: "JobList:
// j0062,j0075,j0069" after the re-add), so MNodeCheckPolicies counted 2
// tasks for j0075 and let it take 2 more: 5 tasks on a node of MAXPROC 4.
// The table is kept only with node policies (e.jl nil otherwise).

// jlGap is an empty slot ((mjob_t *)1 in Maui).
var jlGap = &job{}

// jobTable is one node's table; its length is where the end marker is.
type jobTable []*job

// add is MJobAddToNL on one node.
func (t jobTable) add(j *job) jobTable {
	gap := -1
	for k, x := range t {
		if x == j {
			return t
		}
		if gap < 0 && x == jlGap {
			gap = k
		}
	}
	if gap >= 0 {
		t[gap] = j
		return t[:gap+1] // NULL after it: what followed drops out
	}
	return append(t, j)
}

// remove is MJobRemoveFromNL on one node.
func (t jobTable) remove(j *job) {
	for k, x := range t {
		if x == j {
			t[k] = jlGap
		}
	}
}

// jlAdd puts j, starting now, into its nodes' tables (MJobStart).
func (e *Engine) jlAdd(j *job) {
	for _, h := range j.hosts {
		e.jl[h.node] = e.jl[h.node].add(j)
	}
}

// jlIterate is MSimRMGetInfo at the start of an iteration: the running
// jobs and those that ended since the last one added again, in creation
// order, then the ended ones removed.
func (e *Engine) jlIterate() {
	all := append(e.jlBuf[:0], e.jlEnded...)
	all = append(all, e.running...)
	slices.SortFunc(all, func(a, b *job) int { return cmp.Compare(a.seq, b.seq) })
	for _, j := range all {
		e.jlAdd(j) // still running in Maui's first loop
	}
	for _, j := range e.jlEnded {
		for _, h := range j.hosts {
			e.jl[h.node].remove(j)
		}
	}
	clear(all)
	e.jlBuf = all[:0]
	clear(e.jlEnded)
	e.jlEnded = e.jlEnded[:0]
}

// jlCount is what MNodeCheckPolicies counts on node i for j: the tasks of
// the running jobs its table lists, and of those j's user's.
func (e *Engine) jlCount(j *job, i int) (tasks, utasks int) {
	for _, x := range e.jl[i] {
		if x == jlGap || x.end <= e.now {
			continue
		}
		for _, h := range x.hosts {
			if h.node == i {
				tasks += h.procs
				if x.User == j.User {
					utasks += h.procs
				}
			}
		}
	}
	return tasks, utasks
}

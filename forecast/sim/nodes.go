package sim

import (
	"cmp"
	"iter"
	"math/bits"
	"slices"
)

// Node orders. Maui 3.3.1's MJobAllocMNL takes the feasible nodes (listed
// in the cluster's order) as its allocation policy says:
//
//   - MINRESOURCE: by configured memory class (64, 128, … 4,096 MB, then
//     everything larger), the list walked from its end within a class;
//   - FIRSTAVAILABLE: the list in order;
//   - LASTAVAILABLE: the list walked from its end — for a job starting now
//     after sorting it by how long each node stays available (shortest
//     first, MNodeSelectIdleTasks), so the nodes available longest come
//     first.

// minResourceOrder is MINRESOURCE's order (see above).
func minResourceOrder(nodes []node) []int {
	order := make([]int, len(nodes))
	for k := range order {
		order[k] = len(nodes) - 1 - k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(memClass(nodes[a].mem), memClass(nodes[b].mem)) })
	return order
}

// memClass is the smallest of Maui's memory classes a node falls in.
func memClass(mb int64) int64 {
	for c := int64(64); c < 8192; c <<= 1 {
		if mb <= c {
			return c
		}
	}
	return 8192
}

// allocOrders sets the orders a reservation and a job starting now (other
// than LASTAVAILABLE's, which depends on the job) take nodes in.
func (e *Engine) allocOrders() {
	n := len(e.nodes)
	fwd, rev := make([]int, n), make([]int, n)
	for i := range fwd {
		fwd[i], rev[i] = i, n-1-i
	}
	switch e.policy.NodeAlloc {
	case FirstAvailable:
		e.startOrder, e.resOrder = fwd, fwd
	case LastAvailable:
		e.startOrder, e.resOrder = nil, rev
	case NodePriority:
		e.startOrder, e.resOrder = e.priorityOrder(fwd), e.priorityOrder(fwd)
	default:
		e.startOrder, e.resOrder = e.order, e.order
	}
}

// chunkCap is what one node may give j: everything, or with
// JOBNODEMATCHPOLICY EXACTNODE and a ppn shape one chunk.
func (e *Engine) chunkCap(j *job, f int) int {
	if j.PPN > 0 {
		if e.policy.ExactNode {
			f = min(f, j.PPN)
		}
		f -= f % j.PPN
	}
	return f
}

// pickHosts chooses nodes for j starting now, in the allocation order:
// each gives the fewest processors it keeps free until end (the job's
// walltime end), first fit.
func (e *Engine) pickHosts(j *job, end int64) ([]hostUse, bool) {
	return e.pick(j, end, nil, nil)
}

// pickHostsFrom is pickHosts taking the nodes where prefer > 0 first (a
// job starting on its own reservation).
func (e *Engine) pickHostsFrom(j *job, end int64, prefer []int) ([]hostUse, bool) {
	return e.pick(j, end, nil, prefer)
}

// pick is pickHosts among the nodes in (all when nil), those in prefer
// first.
func (e *Engine) pick(j *job, end int64, in func(int) bool, prefer []int) ([]hostUse, bool) {
	if e.policy.NodeAlloc == MinResource && in == nil && prefer == nil && j.elig == nil {
		return e.pickFree(j, end)
	}
	order := e.startOrder
	if order == nil {
		order = e.lastAvailableOrder(j, in)
	}
	if e.shortChunks(j) {
		return e.pickChunks(j, end, order, in, prefer) // shortchunks.go
	}
	var hosts []hostUse
	need := j.Procs
	for i := range e.pickWalk(j, order, in, prefer) {
		if hosts, need = e.takeOn(j, i, end, hosts, need); need == 0 {
			return slices.Clone(hosts), true // one allocation, of its size
		}
	}
	return nil, false
}

// takeOn adds node i to a starting job's hosts with what it can take
// there (its chunks, up to need) and returns the hosts and what is still
// needed; a node that allows none adds nothing.
func (e *Engine) takeOn(j *job, i int, end int64, hosts []hostUse, need int) ([]hostUse, int) {
	f := e.chunkCap(j, e.nodeAllows(j, i, end))
	if f <= 0 {
		return hosts, need
	}
	take := min(f, need)
	return append(hosts, hostUse{node: i, procs: take}), need - take
}

// pickWalk is the nodes pick may take j onto, in order: those with free
// processors among in (all when nil), the ones where prefer > 0 first
// (Maui's MJobAllocMNL walks them once per affinity level).
func (e *Engine) pickWalk(j *job, order []int, in func(int) bool, prefer []int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for pass := 0; pass < 2; pass++ {
			if pass == 1 && prefer == nil {
				return
			}
			for _, i := range order {
				n := &e.nodes[i]
				if !n.usable || n.used >= n.procs || (in != nil && !in(i)) || !j.can(i) {
					continue
				}
				if prefer != nil && (prefer[i] > 0) != (pass == 0) {
					continue
				}
				if !yield(i) {
					return
				}
			}
		}
	}
}

// lastAvailableOrder is LASTAVAILABLE's order for j starting now: the
// nodes with free processors, longest available first, the last listed
// first among equals.
func (e *Engine) lastAvailableOrder(j *job, in func(int) bool) []int {
	type nw struct {
		i int
		w int64
	}
	cand := make([]nw, 0, len(e.nodes))
	for i := len(e.nodes) - 1; i >= 0; i-- {
		n := &e.nodes[i]
		if !n.usable || n.used >= n.procs || (in != nil && !in(i)) || !j.can(i) {
			continue
		}
		w := int64(rangeEnd)
		if len(n.run) > 0 || len(n.holds) > 0 || e.blockedOn(i) {
			_, w, _ = e.nodeProbe(i, e.nodeEvents(i), j.Procs, j.PPN, j.Walltime)
		} else {
			w -= e.now
		}
		cand = append(cand, nw{i, w})
	}
	slices.SortStableFunc(cand, func(a, b nw) int { return cmp.Compare(b.w, a.w) })
	order := e.laBuf[:0]
	for _, c := range cand {
		order = append(order, c.i)
	}
	e.laBuf = order
	return order
}

// blockedOn reports whether a blocked job's reservation touches node i.
func (e *Engine) blockedOn(i int) bool {
	for _, b := range e.blocked {
		if b.per[i] > 0 {
			return true
		}
	}
	return false
}

// pickFree is pick in the MINRESOURCE order over the nodes with free
// processors only (the bitset by rank), the common fast case.
func (e *Engine) pickFree(j *job, end int64) ([]hostUse, bool) {
	hosts := e.hostBuf[:0]
	defer func() { e.hostBuf = hosts[:0] }()
	need := j.Procs
	for k, word := range e.freeBits {
		for ; word != 0; word &= word - 1 {
			i := e.order[k<<6|bits.TrailingZeros64(word)]
			if hosts, need = e.takeOn(j, i, end, hosts, need); need == 0 {
				return slices.Clone(hosts), true // one allocation, of its size
			}
		}
	}
	return nil, false
}

// pickCand is pickIn in the MINRESOURCE order: the window's nodes are
// listed in that order already.
func (e *Engine) pickCand(j *job, cand []bfNode) ([]hostUse, bool) {
	end := sat(e.now, j.Walltime)
	hosts := e.hostBuf[:0]
	defer func() { e.hostBuf = hosts[:0] }()
	need := j.Procs
	for _, c := range cand {
		n := &e.nodes[c.i]
		if !c.in || n.used >= n.procs || !j.can(c.i) {
			continue
		}
		if hosts, need = e.takeOn(j, c.i, end, hosts, need); need == 0 {
			return slices.Clone(hosts), true
		}
	}
	return nil, false
}

package coalloc

import (
	"math/bits"
	"slices"
)

// Runs: each node's free time cut into maximal runs, so that what a node
// can give over a window is a sum over the runs that contain the window.
//
// For a step function v ≥ 0 (a node's usable processors over time), the
// layers {v ≥ ℓ} split into connected intervals; consecutive levels with
// the same interval form one run: [a, b) with height h. Since a window W
// is connected, v ≥ ℓ everywhere on W exactly when W lies inside one
// interval of level ℓ, so min over W of v = Σ h over the runs that
// contain W. The runs of one node are laminar (nested or disjoint) and
// there are at most as many as v has changes.
//
// A node's value depends on the job's price cut (only pieces priced at or
// below max_price count), so each node's runs are computed at every cut
// among its own price ranks; a run found at consecutive cuts is kept
// once, valid for the cuts [lo, hi).

// stretch is one run of a node, valid at the cuts lo <= maxRank < hi (the
// name run is stage 2's). The node's class and site ride along, so a
// sweep reads nothing else.
type stretch struct {
	a, b   int64
	node   int32
	h      int32
	class  int32
	site   int32
	lo, hi int32
}

// usable reports whether a sweep at price cut r over nodes whose class is
// ok can hold a window of dur inside the run.
func (r *stretch) usable(rank int32, ok []bool, dur int64) bool {
	return r.lo <= rank && rank < r.hi && ok[r.class] && r.b-r.a >= dur
}

// runIndex is every node's runs by start, in lists by length class and
// price group: a sweep of duration d at price cut r reads only the lists
// whose runs can be d long and priced within r, so the runs it passes
// over are mostly ones it uses.
type runIndex struct {
	lists  []runList // [lengthClass*groups + group], each in (a, node) order
	groups int
	ranks  int
	built  bool
}

// lengthClasses split run lengths at 600 s × 2^k: [0, 600), [600, 1200),
// [1200, 2400), … and the last class everything from 600 s × 2^8 (42.7 h).
const (
	lengthClasses = 10
	lengthUnit    = 600
	maxGroups     = 8
)

// lengthClass is the class of a run of length l (or of a duration: the
// runs that can hold it are in its class and the ones above).
func lengthClass(l int64) int {
	if l < lengthUnit {
		return 0
	}
	return min(bits.Len64(uint64(l/lengthUnit)), lengthClasses-1)
}

// group is the price group of a rank: the ranks split into up to
// maxGroups ranges of consecutive ranks.
func (x *runIndex) group(rank int32) int {
	return int(rank) * x.groups / x.ranks
}

func (x *runIndex) slot(s *stretch) int {
	return lengthClass(s.b-s.a)*x.groups + x.group(s.lo)
}

func (x *runIndex) list(s *stretch) *runList { return &x.lists[x.slot(s)] }

// ensureRuns builds the run index on first use; placements keep it
// up to date from then on (addPieces). Every run is computed once, in
// node order, then dealt into its list (stably, so node order within
// each list) and sorted there by start.
func (p *Pool) ensureRuns() {
	if p.runs.built {
		return
	}
	x := runIndex{ranks: max(1, len(p.prices)), built: true}
	x.groups = min(maxGroups, x.ranks)
	x.lists = make([]runList, lengthClasses*x.groups)
	all := make([]stretch, 0, p.edges/2+len(p.nodes))
	for n := range p.nodes {
		all = p.rw.nodeRuns(p, int32(n), all)
	}
	first := make([]int, len(x.lists)+1) // where each list begins in starts
	for i := range all {
		first[x.slot(&all[i])+1]++
	}
	for k := range x.lists {
		first[k+1] += first[k]
	}
	next := slices.Clone(first)
	starts := make([]stretch, len(all))
	for i := range all {
		k := x.slot(&all[i])
		starts[next[k]] = all[i]
		next[k]++
	}
	for k := range x.lists {
		byStart := starts[first[k]:first[k+1]]
		radixRuns(byStart, all) // so (a, node) order
		x.lists[k] = newRunList(byStart)
	}
	p.runs = x
}

// keepRuns makes sure node n's runs in the index are known (in
// p.rw.kept) before its pieces change.
func (p *Pool) keepRuns(n int32) {
	if p.rw.kept == nil {
		p.rw.kept = make([][]stretch, len(p.nodes))
	}
	if p.rw.kept[n] == nil {
		p.rw.kept[n] = p.rw.nodeRuns(p, n, []stretch{})
	}
}

// rerun replaces node n's runs in the index after its pieces changed
// (keepRuns was called before).
func (p *Pool) rerun(n int32) {
	old := p.rw.kept[n]
	now := p.rw.nodeRuns(p, n, p.rw.now[:0])
	p.rw.now = now
	same := p.rw.same[:0]
	for range now {
		same = append(same, false)
	}
	p.rw.same = same
	for _, r := range old {
		i := slices.Index(now, r)
		for i >= 0 && same[i] { // a run listed twice (the next equal one)
			j := slices.Index(now[i+1:], r)
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i >= 0 {
			same[i] = true // unchanged
			continue
		}
		p.runs.list(&r).remove(r)
	}
	for i, r := range now {
		if !same[i] {
			p.runs.list(&r).insert(r)
		}
	}
	p.rw.kept[n] = append(old[:0], now...)
}

// radixRuns sorts runs by start, stably (an LSD radix sort, as
// sortByTime), using buf (at least as long) as scratch.
func radixRuns(rs, buf []stretch) {
	if len(rs) < 2 {
		return
	}
	lo, hi := rs[0].a, rs[0].a
	for i := range rs {
		lo, hi = min(lo, rs[i].a), max(hi, rs[i].a)
	}
	span := uint64(hi - lo)
	const bits = 11
	src, dst := rs, buf[:len(rs)]
	for shift := uint(0); shift < 64 && span>>shift > 0; shift += bits {
		var count [1<<bits + 1]int
		for i := range src {
			count[(uint64(src[i].a-lo)>>shift)&(1<<bits-1)+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for i := range src {
			d := (uint64(src[i].a-lo) >> shift) & (1<<bits - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &rs[0] {
		copy(rs, src)
	}
}

package coalloc

import (
	"math"
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
// price group: a sweep of duration d at price cut r
// reads only the lists whose runs can be d long and priced within r, so
// the runs it passes over are mostly ones it uses.
type runIndex struct {
	lists  []runPair // [lengthClass*groups + group]
	groups int
	ranks  int
	built  bool
}

type runPair struct {
	byStart runList // (a, node) order
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

func (x *runIndex) pair(s *stretch) *runPair { return &x.lists[x.slot(s)] }

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
	x.lists = make([]runPair, lengthClasses*x.groups)
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
		radixRuns(byStart, all, func(r *stretch) int64 { return r.a }) // so (a, node) order
		x.lists[k] = runPair{byStart: newRunList(byStart)}
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
		l := p.runs.pair(&r)
		l.byStart.remove(r)
	}
	for i, r := range now {
		if !same[i] {
			l := p.runs.pair(&r)
			l.byStart.insert(r)
		}
	}
	p.rw.kept[n] = append(old[:0], now...)
}

// runWork is the scratch of nodeRuns.
type runWork struct {
	ranks  []int32
	prices []float64 // the node's prices seen so far, with ranks
	pranks []int32
	edges  []edgeAt  // the node's piece edges in time order
	cur    []stretch // the runs at the current cut
	open   []stretch // the runs found at the previous cut, hi not yet known
	stack  []band
	// kept is the runs of the nodes placements changed, as in the index
	// (nil: not known yet); now is rerun's scratch.
	kept [][]stretch
	now  []stretch
	same []bool
}

type edgeAt struct {
	at    int64
	delta int64
	rank  int32
}

// band is a layer of the skyline open since s: the levels up to h above
// the band below it.
type band struct {
	h, s int64
}

// nodeRuns appends node n's runs at every cut among its price ranks.
func (w *runWork) nodeRuns(p *Pool, n int32, out []stretch) []stretch {
	w.nodeEdges(p, n)
	w.open = w.open[:0]
	for _, cut := range w.ranks {
		w.cutRuns(p, n, cut)
		// Runs gone at this cut end their validity; new ones begin it.
		kept := w.open[:0]
		for _, r := range w.open {
			if i := sameRun(w.cur, r); i >= 0 {
				w.cur[i].lo = -1 // matched
				kept = append(kept, r)
				continue
			}
			r.hi = cut
			out = append(out, r)
		}
		w.open = kept
		for _, r := range w.cur {
			if r.lo != -1 {
				r.lo = cut
				w.open = append(w.open, r)
			}
		}
	}
	for _, r := range w.open {
		r.hi = math.MaxInt32
		out = append(out, r)
	}
	return out
}

// nodeEdges sets w.edges to node n's piece edges in time order, each with
// its price rank, and w.ranks to the node's distinct ranks, ascending.
func (w *runWork) nodeEdges(p *Pool, n int32) {
	w.ranks, w.prices, w.pranks, w.edges = w.ranks[:0], w.prices[:0], w.pranks[:0], w.edges[:0]
	sorted, last := true, int64(math.MinInt64)
	for _, pc := range p.nodes[n].pieces {
		i := slices.Index(w.prices, pc.price)
		if i < 0 {
			i = len(w.prices)
			w.prices = append(w.prices, pc.price)
			w.pranks = append(w.pranks, p.rank[pc.price])
			if !slices.Contains(w.ranks, w.pranks[i]) {
				w.ranks = append(w.ranks, w.pranks[i])
			}
		}
		r := w.pranks[i]
		sorted = sorted && pc.start >= last
		last = pc.end
		w.edges = append(w.edges, edgeAt{pc.start, pc.procs, r}, edgeAt{pc.end, -pc.procs, r})
	}
	slices.Sort(w.ranks)
	if !sorted { // pieces that do not overlap, in time order, need none
		slices.SortFunc(w.edges, func(x, y edgeAt) int { return cmpInt(x.at, y.at) })
	}
}

func sameRun(rs []stretch, r stretch) int {
	for i := range rs {
		if rs[i].a == r.a && rs[i].b == r.b && rs[i].h == r.h && rs[i].lo != -1 {
			return i
		}
	}
	return -1
}

// cutRuns sets w.cur to node n's runs counting its edges ranked at or
// below cut (lo and hi unset): the skyline of the node's value, whose
// bands end (each a run) where the value drops below them.
func (w *runWork) cutRuns(p *Pool, n int32, cut int32) {
	w.cur, w.stack = w.cur[:0], w.stack[:0]
	proto := stretch{node: n, class: p.nodeClass[n], site: p.nodeSite[n]}
	var v int64
	for i := 0; i < len(w.edges); {
		x := w.edges[i].at
		d := int64(0)
		for ; i < len(w.edges) && w.edges[i].at == x; i++ {
			if w.edges[i].rank <= cut {
				d += w.edges[i].delta
			}
		}
		if d == 0 {
			continue // the value goes on: abutting pieces join here
		}
		v += d
		for len(w.stack) > 0 && w.stack[len(w.stack)-1].h > v {
			top := w.stack[len(w.stack)-1]
			w.stack = w.stack[:len(w.stack)-1]
			below := int64(0)
			if len(w.stack) > 0 {
				below = w.stack[len(w.stack)-1].h
			}
			r := proto
			r.a, r.b, r.h = top.s, x, int32(top.h-max(below, v))
			w.cur = append(w.cur, r)
			if below < v {
				// the levels from below up to v go on, open since top.s
				w.stack = append(w.stack, band{h: v, s: top.s})
				break
			}
		}
		if v > 0 && (len(w.stack) == 0 || w.stack[len(w.stack)-1].h < v) {
			w.stack = append(w.stack, band{h: v, s: x})
		}
	}
}

// radixRuns sorts runs by key, stably (an LSD radix sort, as sortByTime),
// using buf (at least as long) as scratch.
func radixRuns(rs, buf []stretch, key func(*stretch) int64) {
	if len(rs) < 2 {
		return
	}
	lo, hi := key(&rs[0]), key(&rs[0])
	for i := range rs {
		k := key(&rs[i])
		lo, hi = min(lo, k), max(hi, k)
	}
	span := uint64(hi - lo)
	const bits = 11
	src, dst := rs, buf[:len(rs)]
	for shift := uint(0); shift < 64 && span>>shift > 0; shift += bits {
		var count [1<<bits + 1]int
		for i := range src {
			count[(uint64(key(&src[i])-lo)>>shift)&(1<<bits-1)+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for i := range src {
			d := (uint64(key(&src[i])-lo) >> shift) & (1<<bits - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &rs[0] {
		copy(rs, src)
	}
}

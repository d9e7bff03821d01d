package coalloc

import (
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

// runIndex is every node's runs by start, in lists by length class,
// speed group and price group: a sweep of duration d over the nodes at
// least as fast as its tier at price cut r reads only the lists whose
// runs can be d long, on nodes that fast and priced within r, so the
// runs it passes over are mostly ones it uses.
type runIndex struct {
	lists  []runList // [(lengthClass*speeds + speed group)*groups + group], each in (a, node) order
	bounds []int64   // the length classes' bounds (lengthBounds when built)
	groups int
	ranks  int
	speeds int       // speed groups
	speed  []int32   // each node class's speed group
	top    []float64 // each speed group's fastest speed
	built  bool
}

// maxGroups bounds the price groups, maxSpeeds the speed groups.
const (
	maxGroups = 4
	maxSpeeds = 4
)

// lengthBounds split run lengths into classes: class k holds the lengths
// from bounds[k-1] (0 for k = 0) below bounds[k], the last one everything
// from the last bound: 600 s × 1.25^k, 26 classes, the last one from
// 600 s × 1.25^24 (35 h). A sweep of duration d reads the class of d
// and those above; in the class of d, runs shorter than d are read and
// not used, at most the part below d of a class 25 % wide.
var lengthBounds = geometricBounds(600, 1.25, 25)

// coarseBounds are the length classes before (600 s × 2^k, ten classes)
// and coarseRuns makes new run indexes use them with one speed group and
// up to coarseGroups price groups: the index of the benchmarks' baseline.
var (
	coarseBounds = geometricBounds(600, 2, 9)
	coarseRuns   = false
)

const coarseGroups = 8

// SetCoarseRuns makes the run indexes built from now on coarse (as
// before issue 39: length classes 600 s × 2^k, no speed groups) or not,
// and returns the setting before: for the daemon's benchmarks only, whose
// baseline it is in the same binary. The answers are the same either way.
func SetCoarseRuns(on bool) (was bool) {
	was, coarseRuns = coarseRuns, on
	return was
}

// geometricBounds is n bounds from unit, each ratio times the one before
// (rounded down to the second).
func geometricBounds(unit int64, ratio float64, n int) []int64 {
	out := make([]int64, 0, n)
	for b := float64(unit); len(out) < n; b *= ratio {
		out = append(out, int64(b))
	}
	return out
}

// classes is the number of length classes.
func (x *runIndex) classes() int { return len(x.bounds) + 1 }

// lengthClass is the class of a run of length l (or of a duration: the
// runs that can hold it are in its class and the ones above).
func (x *runIndex) lengthClass(l int64) int {
	k, _ := slices.BinarySearch(x.bounds, l+1)
	return k
}

// speedGroups splits the pool's distinct node speeds into up to
// maxSpeeds ranges of consecutive speeds (one when coarse).
func (x *runIndex) speedGroups(classes []class, coarse bool) {
	var speeds []float64
	for _, c := range classes {
		speeds = append(speeds, c.speed)
	}
	slices.Sort(speeds)
	speeds = slices.Compact(speeds)
	x.speeds = max(1, min(maxSpeeds, len(speeds)))
	if coarse {
		x.speeds = 1
	}
	x.speed = make([]int32, len(classes))
	x.top = make([]float64, x.speeds)
	for i, c := range classes {
		k, _ := slices.BinarySearch(speeds, c.speed)
		g := k * x.speeds / len(speeds)
		x.speed[i] = int32(g)
		x.top[g] = max(x.top[g], c.speed)
	}
}

// group is the price group of a rank: the ranks split into up to
// maxGroups ranges of consecutive ranks.
func (x *runIndex) group(rank int32) int {
	return int(rank) * x.groups / x.ranks
}

func (x *runIndex) slot(s *stretch) int {
	return (x.lengthClass(s.b-s.a)*x.speeds+int(x.speed[s.class]))*x.groups + x.group(s.lo)
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
	x := runIndex{ranks: max(1, len(p.prices)), bounds: lengthBounds, built: true}
	if coarseRuns {
		x.bounds = coarseBounds
	}
	x.speedGroups(p.classes, coarseRuns)
	x.groups = min(maxGroups, x.ranks)
	if coarseRuns {
		x.groups = min(coarseGroups, x.ranks)
	}
	x.lists = make([]runList, x.classes()*x.speeds*x.groups)
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

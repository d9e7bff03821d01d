package coalloc

import (
	"math"
	"slices"
)

// One node's runs (runs.go): the skyline of its value at every price cut
// among its own prices.

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

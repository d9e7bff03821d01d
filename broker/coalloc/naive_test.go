package coalloc

import (
	"math"
	"slices"
)

// The naive quadratic baseline of stage 1: for each candidate start in
// time order, rescan every piece of every node (backfill style). Used by
// tests (cross-check) and benchmarks (speed baseline) only.

func (p *Pool) useNaive() {
	var last []nodeCap
	p.stage1 = func(sp sweepSpec) (int64, bool) {
		t, caps, ok := p.naiveSweep(sp)
		last = caps
		return t, ok
	}
	p.stage1Caps = func() []nodeCap { return last }
}

func (p *Pool) naiveSweep(sp sweepSpec) (int64, []nodeCap, bool) {
	cands := []int64{p.opts.NotBefore}
	p.ensureEvents()
	p.events.all(func(e event) {
		if e.at > p.opts.NotBefore {
			cands = append(cands, e.at)
		}
	})
	slices.Sort(cands)
	cands = slices.Compact(cands)
	siteCap := make([]int64, len(p.sites))
	for _, t := range cands {
		if t > sp.limit {
			break
		}
		clear(siteCap)
		var caps []nodeCap
		end := addSat(t, sp.dur)
		for n := range p.nodes {
			if !p.sc.classBase[p.nodeClass[n]] || p.nodes[n].speed < sp.tier {
				continue
			}
			if c := p.naiveMin(int32(n), t, end, sp.rankAt(p.nodeSite[n])); c > 0 {
				caps = append(caps, nodeCap{node: int32(n), cap: c})
				siteCap[p.nodes[n].site] += c
			}
		}
		if naiveFeasible(siteCap, sp) {
			return t, caps, true
		}
	}
	return 0, nil, false
}

// naiveMin is the minimum over [a, b) of the node's usable processors,
// evaluated at a and at every piece edge inside.
func (p *Pool) naiveMin(n int32, a, b int64, maxRank int32) int64 {
	maxPrice := math.Inf(-1)
	if maxRank >= 0 {
		maxPrice = p.prices[maxRank]
	}
	pcs := p.nodes[n].pieces
	best := int64(math.MaxInt64)
	at := func(u int64) {
		var c int64
		for _, pc := range pcs {
			if pc.price <= maxPrice && pc.start <= u && u < pc.end {
				c += pc.procs
			}
		}
		best = min(best, c)
	}
	at(a)
	for _, pc := range pcs {
		if pc.price > maxPrice {
			continue
		}
		if pc.start > a && pc.start < b {
			at(pc.start)
		}
		if pc.end > a && pc.end < b {
			at(pc.end)
		}
	}
	return best
}

func naiveFeasible(siteCap []int64, sp sweepSpec) bool {
	s := slices.Clone(siteCap)
	slices.SortFunc(s, func(a, b int64) int { return cmpInt(b, a) })
	var sum int64
	for i, c := range s {
		if i >= sp.sites {
			break
		}
		sum += c
	}
	return sum >= sp.procs
}

package coalloc

import (
	"cmp"
	"math"
	"slices"

	"lookahead/forecast"
)

// Stage 2: given the winning start and window, choose the sites and nodes.
//
//   - If one site can hold the whole job, the job stays on one site: the one
//     whose cheapest P processors cost least over the window (ties: the
//     earlier realized end, then forecast order).
//   - Otherwise the cheapest of a few sets of the fewest sites that can
//     hold it (siteSets: structured, never every subset; with up to three
//     sites, every set of that many), ties to the earlier realized end,
//     then to the largest capacity first (ties: forecast order).
//   - Within the chosen sites, processors are taken cheapest first: each
//     node offers its processors as runs of equal unit cost (the cost of one
//     processor over the window, cheapest price levels first), and runs are
//     taken by unit cost, then faster node, then forecast order.

// take is processors held on one node.
type take struct {
	node  int32
	procs int64
}

type plan struct {
	start, end int64
	takes      []take
	why        string // Allocation.Why
}

type run struct {
	node  int32
	procs int64
	unit  float64 // cost of one processor over the window
}

func (p *Pool) choose(job forecast.JobRequest, c candidate) plan {
	P := int64(job.Procs)
	bySite := map[int][]nodeCap{}
	siteCap := map[int]int64{}
	for _, nc := range c.caps {
		s := p.nodes[nc.node].site
		bySite[s] = append(bySite[s], nc)
		siteCap[s] += nc.cap
	}
	from, to := c.start, addSat(c.start, c.dur)
	var best plan
	var bestCost float64
	found := false
	for s := range p.sites {
		if siteCap[s] < P {
			continue
		}
		takes, cost := p.greedy(bySite[s], P, from, to, job.MaxPrice)
		pl := p.realize(job, c.start, takes)
		if !found || cost < bestCost || (cost == bestCost && pl.end < best.end) {
			best, bestCost, found = pl, cost, true
		}
	}
	if found {
		return best
	}
	for _, set := range p.siteSets(bySite, siteCap, P, from, to, job.MaxPrice) {
		var caps []nodeCap
		for _, s := range set {
			caps = append(caps, bySite[s]...)
		}
		takes, cost := p.greedy(caps, P, from, to, job.MaxPrice)
		pl := p.realize(job, c.start, takes)
		if !found || cost < bestCost || (cost == bestCost && pl.end < best.end) {
			best, bestCost, found = pl, cost, true
		}
	}
	return best
}

// siteSets are the site sets a job that no one site can hold may take,
// all of the fewest sites that can hold it (k, found by taking the largest
// first), structured and never every subset: the largest first; for each
// site, that site and then the others largest first, or cheapest first
// (by the cost per processor of their cheapest processors over the
// window); and, when k is one less than the sites that have room, every
// set leaving one out (so with up to three sites every set of k sites is
// weighed). The first listed is the capacity choice of old: it wins ties.
func (p *Pool) siteSets(bySite map[int][]nodeCap, siteCap map[int]int64, P, from, to int64, maxPrice float64) [][]int {
	sites := make([]int, 0, len(siteCap))
	for s := range siteCap {
		sites = append(sites, s)
	}
	slices.Sort(sites)
	bySize := slices.Clone(sites)
	slices.SortStableFunc(bySize, func(a, b int) int { return cmp.Compare(siteCap[b], siteCap[a]) })
	unit := map[int]float64{}
	for _, s := range sites {
		q := min(siteCap[s], P)
		_, c := p.greedy(bySite[s], q, from, to, maxPrice)
		unit[s] = c / float64(q)
	}
	byPrice := slices.Clone(sites)
	slices.SortStableFunc(byPrice, func(a, b int) int { return cmp.Compare(unit[a], unit[b]) })
	without := func(order []int, s int) []int {
		return slices.DeleteFunc(slices.Clone(order), func(x int) bool { return x == s })
	}
	fill := func(order []int) []int { // a prefix of order that holds P
		var sum int64
		for i, s := range order {
			if sum += siteCap[s]; sum >= P {
				return order[:i+1]
			}
		}
		return nil
	}
	k := len(fill(bySize))
	if k == 0 { // cannot happen for a feasible candidate; take what there is
		return [][]int{bySize}
	}
	out := [][]int{fill(bySize)}
	for _, s := range sites {
		out = append(out, fill(append([]int{s}, without(bySize, s)...)), fill(append([]int{s}, without(byPrice, s)...)))
	}
	if k == len(sites)-1 {
		for _, s := range sites {
			out = append(out, fill(without(sites, s)))
		}
	}
	return slices.DeleteFunc(out, func(set []int) bool { return len(set) != k })
}

// greedy takes P processors cheapest first from the given nodes: runs
// by unit cost, then faster node, then forecast order (then the order
// appended, as a stable sort would).
func (p *Pool) greedy(caps []nodeCap, P, from, to int64, maxPrice float64) ([]take, float64) {
	runs := make([]run, 0, len(caps))
	for _, nc := range caps {
		runs = p.appendRuns(runs, nc.node, nc.cap, from, to, maxPrice)
	}
	keys := make([]runKey, len(runs))
	for i, r := range runs {
		keys[i] = runKey{unit: r.unit, speed: p.nodes[r.node].speed, ord: p.ord[r.node], i: int32(i)}
	}
	heapify(keys) // only the cheapest few are taken: no full sort
	var takes []take
	var cost float64
	need := P
	for len(keys) > 0 && need > 0 {
		var k runKey
		k, keys = popMin(keys)
		r := runs[k.i]
		q := min(need, r.procs)
		takes = append(takes, take{node: r.node, procs: q})
		cost += float64(q) * r.unit
		need -= q
	}
	slices.SortFunc(takes, func(a, b take) int { return cmp.Compare(p.ord[a.node], p.ord[b.node]) })
	out := takes[:0] // one take per node
	for _, t := range takes {
		if len(out) > 0 && out[len(out)-1].node == t.node {
			out[len(out)-1].procs += t.procs
			continue
		}
		out = append(out, t)
	}
	return out, cost
}

// runKey is a run's place in greedy's order.
type runKey struct {
	unit, speed float64
	ord, i      int32
}

func (a runKey) less(b runKey) bool {
	if c := cmp.Compare(a.unit, b.unit); c != 0 {
		return c < 0
	}
	switch {
	case a.speed != b.speed:
		return a.speed > b.speed
	case a.ord != b.ord:
		return a.ord < b.ord
	}
	return a.i < b.i
}

// heapify orders h as a binary min-heap by runKey.less.
func heapify(h []runKey) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
}

// popMin removes the least key of heap h.
func popMin(h []runKey) (runKey, []runKey) {
	top := h[0]
	h[0] = h[len(h)-1]
	h = h[:len(h)-1]
	siftDown(h, 0)
	return top, h
}

func siftDown(h []runKey, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].less(h[l]) {
			m = r
		}
		if !h[m].less(h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// realize fixes the end from the chosen nodes' slowest speed and site count.
func (p *Pool) realize(job forecast.JobRequest, start int64, takes []take) plan {
	slowest := 0.0
	sites := map[int]bool{}
	for _, t := range takes {
		n := &p.nodes[t.node]
		if slowest == 0 || n.speed < slowest {
			slowest = n.speed
		}
		sites[n.site] = true
	}
	end := addSat(start, p.opts.Duration(job.Walltime, slowest, len(sites)))
	return plan{start: start, end: end, takes: takes}
}

// commit removes the plan's processors from the pool, cheapest price level
// first at every instant, and returns the allocation with its cost. A cost
// that is not a finite number (huge prices over a long hold) is refused as
// invalid and takes nothing: no allocation the planner returns carries one.
func (p *Pool) commit(job forecast.JobRequest, pl plan) forecast.Allocation {
	a, taken := p.price(job, pl)
	if a.Placed() {
		p.apply(pl, taken)
	}
	return a
}

// price is commit without taking: the allocation the plan gives (or the
// non-finite-cost refusal) and, per take, the pieces it would remove.
func (p *Pool) price(job forecast.JobRequest, pl plan) (forecast.Allocation, [][]piece) {
	a := forecast.Allocation{Job: job.ID, Start: pl.start, End: pl.end, Why: pl.why}
	taken := make([][]piece, len(pl.takes))
	costs := make([]float64, len(pl.takes))
	for i, t := range pl.takes {
		taken[i], costs[i] = takeCheapest(p.profile(t.node, pl.start, pl.end, job.MaxPrice), t.procs)
		a.Cost += costs[i]
	}
	if math.IsInf(a.Cost, 0) || math.IsNaN(a.Cost) {
		return forecast.Allocation{Job: job.ID, Error: InvalidPrefix + NonFiniteCost}, nil
	}
	for i, t := range pl.takes {
		n := &p.nodes[t.node]
		a.Parts = append(a.Parts, forecast.Part{Site: p.sites[n.site].fc.Site, Node: n.name, Procs: int(t.procs), Cost: costs[i]})
	}
	return a, taken
}

// apply removes what price computed from the pool.
func (p *Pool) apply(pl plan, taken [][]piece) {
	for i, t := range pl.takes {
		p.addPieces(t.node, taken[i])
	}
}

// NonFiniteCost explains an "invalid: " allocation whose cost overflowed.
const NonFiniteCost = "cost is not a finite number (price × processors × hours overflows); lower max_price"

package coalloc

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"lookahead/forecast"
)

// The cheapest criterion (forecast.Cheapest): the user says it values
// cost within a bound. The bound is the job's deadline, or without one
// the free window of free-first (Options.FreeTolerance × walltime after
// the earliest finish E at max_price). Among the allocations that finish
// by it, the cheapest: first among those on free time alone (each owner's
// idle time at its own free price), then among all the job's max_price
// buys; ties go to the earlier finish, then fewer sites. When no
// allocation finishes by the deadline, the earliest finish.
//
// The allocations weighed are structured: the least-held sweeps (speed
// tier × site limit), each at its earliest start, at the price levels the
// job could wait for. The first level is the pass's cut (free time, or
// max_price), every sweep's start weighed there; then the same sweeps
// again with every site cut below the dearest price an allocation of the
// level used: a lower cut can only start later, on processors no dearer,
// which is how a later start that costs less (the cheaper owner's idle
// time after a local job) is found. Levels between are skipped: there each
// sweep finds the same start, and stage 2 the same processors (those it
// took are all under the cut, the others only got dearer). A sweep goes
// down only to prices at which its processors over its hold would cost
// less than the cheapest allocation so far, and stops once it finds no
// start by the bound; a start it found at a higher level is realized once.
// The winner, when found under the pass's cut, is realized again at that
// cut at its start (its sites' cheapest processors there). Not weighed:
// starts between those (a window sliding off a dear stretch onto a cheap
// one at the same cut), and site sets stage 2 does not list.

// noWindow keeps every candidate up to the bound (no tolerance).
func noWindow(forecast.JobRequest, int64) int64 { return math.MaxInt64 }

// cheapestOneLevel weighs the pass's cut only (each sweep's earliest start
// at the job's price: the rule before): the benchmarks' baseline.
var cheapestOneLevel = false

// pickCheapest ranks a cheapest job whose least-held candidates at its
// max price are cands (searched with tiers).
func (p *Pool) pickCheapest(job forecast.JobRequest, cands []candidate, tiers []float64) plan {
	e := earliestEnd(cands)
	bound, what := withinBy(p.opts.FreeTolerance, job, e), fmt.Sprintf("within %g × walltime of the earliest finish", p.opts.FreeTolerance)
	if job.Deadline > 0 {
		bound, what = job.Deadline, "by its deadline"
	}
	return p.cheapestWithin(job, cands, tiers, e, bound, what)
}

// cheapestWithin is the cheapest allocation finishing by bound (what
// names it in the why), free time first; e is the earliest finish.
func (p *Pool) cheapestWithin(job forecast.JobRequest, cands []candidate, tiers []float64, e, bound int64, what string) plan {
	if bound < e {
		pl := p.pickBy(job, cands, endFirst)
		pl.why = fmt.Sprintf("cheapest: no allocation finishes by its deadline; the earliest finish, %d s after it", pl.end-job.Deadline)
		return pl
	}
	if cut, ok := p.freeCut(job.MaxPrice); ok {
		if pl, n, found := p.cheapestBy(job, tiers, bound, cut); found {
			pl.why = fmt.Sprintf("cheapest: free time only (%s), the cheapest of %d allocations finishing %s; %s",
				p.freePrices(pl), n, what, p.costNote(job, pl, e))
			return pl
		}
	}
	pl, n, _ := p.cheapestBy(job, tiers, bound, nil)
	pl.why = fmt.Sprintf("cheapest: the cheapest of %d allocations finishing %s (free time alone cannot); %s", n, what, p.costNote(job, pl, e))
	return pl
}

// cheapestBy is the cheapest of the allocations the sweeps find at the
// price levels under base (the cut per site; nil: max_price everywhere)
// that finish by bound, and how many were weighed. Below the first level
// a sweep runs only while its processors at the level's price over its
// hold would cost less than the cheapest so far (else that one is no
// dearer than waiting for that price could be), and only until it finds
// no start by the bound. The next level is the dearest, over the sweeps,
// under what the sweep's allocation used and under that price.
func (p *Pool) cheapestBy(job forecast.JobRequest, tiers []float64, bound int64, base []int32) (plan, int, bool) {
	defer func() { p.cut = nil }()
	type sweepKey struct {
		dur   int64
		sites int
		tier  float64
	}
	type startKey struct {
		sweepKey
		start int64
	}
	dearest := map[startKey]int32{} // the starts realized: the dearest rank each one's allocation used
	dead := map[sweepKey]bool{}     // sweeps that found no start by the bound at a cut
	var best ranked
	var won candidate // best's
	wonFirst := false
	n := 0
	// below is the dearest rank under r at which P processors over a hold
	// of dur would cost less than the cheapest so far.
	below := func(r int32, dur int64) int32 {
		x := best.cost * 3600 / (float64(job.Procs) * float64(dur))
		return min(r, int32(sort.SearchFloat64s(p.prices, x))) - 1
	}
	top := p.maxRank(job.MaxPrice)
	if base != nil {
		top = maxOf(base)
	}
	level := top
	for first := true; level >= 0; first = false {
		p.cut = levelCut(base, level, first, len(p.sites))
		next := int32(-1)
		var specs []sweepSpec
		for _, sp := range p.allSpecs(job, tiers) {
			switch k := (sweepKey{sp.dur, sp.sites, sp.tier}); {
			case dead[k]:
			case first || below(level+1, sp.dur) == level:
				specs = append(specs, sp)
				dead[k] = true // until it finds a start
			default:
				next = max(next, below(level, sp.dur))
			}
		}
		cands, _ := p.candidatesOf(job, specs, bound, noWindow)
		for _, c := range cands {
			k := startKey{sweepKey{c.dur, c.sites, c.tier}, c.start}
			dead[k.sweepKey] = false
			u, seen := dearest[k]
			if !seen || u > level { // (at a cut under u stage 2 may choose otherwise)
				n++
				pl := p.choose(job, c)
				r := ranked{pl: pl, cost: p.planCost(job, pl), sites: p.planSites(pl)}
				if n == 1 || costFirst(r, best) < 0 {
					best, won, wonFirst = r, c, first
				}
				u = p.dearestUsed(job, c, pl)
				dearest[k] = u
			}
			next = max(next, below(min(u, level), c.dur))
		}
		if cheapestOneLevel {
			break
		}
		level = next
	}
	if n > 0 && !wonFirst {
		p.cut = levelCut(base, top, true, len(p.sites))
		if r, ok := p.rechoose(job, won); ok && costFirst(r, best) < 0 {
			best = r
		}
	}
	return best.pl, n, n > 0
}

// rechoose realizes candidate c, found at a lower cut, at the pass's cut
// (p.cut): the same start, with the node capacities there, so that the
// allocation takes the cheapest processors its sites offer over the
// window (a node whose price rises within it counts again).
func (p *Pool) rechoose(job forecast.JobRequest, c candidate) (ranked, bool) {
	i := slices.IndexFunc(p.specs(job, c.tier), func(sp sweepSpec) bool { return sp.sites == c.sites && sp.dur == c.dur })
	if i < 0 {
		return ranked{}, false
	}
	sp := p.specs(job, c.tier)[i]
	floor := p.floor
	defer func() { p.floor = floor }()
	p.floor, sp.limit = max(floor, c.start), c.start
	t, ok := p.stage1(sp)
	if !ok || t != c.start {
		return ranked{}, false
	}
	c.caps = p.stage1Caps()
	pl := p.choose(job, c)
	return ranked{pl: pl, cost: p.planCost(job, pl), sites: p.planSites(pl)}, true
}

// levelCut is the cut per site at price rank level under base: nil on the
// first level of the max_price pass (the plain search).
func levelCut(base []int32, level int32, first bool, sites int) []int32 {
	if base == nil && first {
		return nil
	}
	cut := make([]int32, sites)
	for s := range cut {
		cut[s] = level
		if base != nil {
			cut[s] = min(base[s], level)
		}
	}
	return cut
}

func maxOf(xs []int32) int32 {
	m := int32(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// dearestUsed is the rank of the dearest price the plan's processors take
// over candidate c's window (the one its sweep and stage 2 judged): at
// that cut and above, c's sweep finds the same start.
func (p *Pool) dearestUsed(job forecast.JobRequest, c candidate, pl plan) int32 {
	u := int32(-1)
	for _, t := range pl.takes {
		pcs, _ := takeCheapest(p.profile(t.node, c.start, addSat(c.start, c.dur), job.MaxPrice), t.procs)
		for _, pc := range pcs {
			u = max(u, p.rankOf(pc.price))
		}
	}
	return u
}

// costNote says what the plan costs and how much later than the earliest
// finish e it ends.
func (p *Pool) costNote(job forecast.JobRequest, pl plan, e int64) string {
	return fmt.Sprintf("%.4g credits, ending %d s after the earliest finish", p.planCost(job, pl), pl.end-e)
}

// A ranking of realized allocations: cost, end and sites.
type ranked struct {
	pl    plan
	cost  float64
	sites int
}

func costFirst(a, b ranked) int {
	if c := cmp.Compare(a.cost, b.cost); c != 0 {
		return c
	}
	if c := cmp.Compare(a.pl.end, b.pl.end); c != 0 {
		return c
	}
	return cmp.Compare(a.sites, b.sites)
}

func endFirst(a, b ranked) int {
	if c := cmp.Compare(a.pl.end, b.pl.end); c != 0 {
		return c
	}
	if c := cmp.Compare(a.sites, b.sites); c != 0 {
		return c
	}
	return cmp.Compare(a.cost, b.cost)
}

// pickBy realizes every candidate (stage 2) and keeps the first by order
// (earlier candidates win ties).
func (p *Pool) pickBy(job forecast.JobRequest, cands []candidate, order func(a, b ranked) int) plan {
	var best ranked
	for i, c := range cands {
		pl := p.choose(job, c)
		r := ranked{pl: pl, cost: p.planCost(job, pl), sites: p.planSites(pl)}
		if i == 0 || order(r, best) < 0 {
			best = r
		}
	}
	return best.pl
}

package coalloc

import (
	"cmp"
	"fmt"
	"math"

	"lookahead/forecast"
)

// The least-held criterion (forecast.LeastHeld): among the
// allocations that finish at most Options.Tolerance × walltime after the
// earliest possible finish E, the one that holds the least work, then the
// earliest finish, then the fewest sites, then the cheapest, then the
// faster tier.
//
// Work is counted in reference processor-seconds, a node's second worth its
// speed: an allocation of P processors on m sites holds
// P × (walltime × MultiSiteFactor + (m-1) × StagingDelay) when m > 1 and
// P × walltime on one site. A slow node's longer hold is no waste by itself
// (it delivers the same work); what is wasted is the multi-site factor and
// the staging, which the criterion avoids when one site finishes within the
// tolerance. (Counting plain processor-seconds instead starves a large slow
// site: see docs/coalloc.md for the measurements.)
//
// The allocations weighed are structured, never all site subsets: one per
// sweep of the job (speed tier t × site limit m, nested: the nodes at least
// t fast, the m largest sites), each at that sweep's earliest start, then
// stage 2's site and node choice. Work depends only on the number of sites,
// which a sweep bounds, so each sweep's earliest start is its best
// allocation by this key, and the least work within the window is exact
// with exact tiers. See docs/coalloc.md.

// weighed is one allocation the criterion compares.
type weighed struct {
	pl    plan
	held  float64 // work per processor, reference seconds (see workOf)
	cost  float64
	sites int
	tier  float64
}

func (p *Pool) selectLeastHeld(job forecast.JobRequest, tiers, exact []float64, crit string) (plan, string) {
	cands, ok := p.heldCandidates(job, tiers, math.MaxInt64)
	if !ok && len(tiers) < len(exact) {
		tiers = exact // coarse tiers never cost a fit
		cands, ok = p.heldCandidates(job, exact, math.MaxInt64)
	}
	if !ok {
		return plan{}, NoFitCapacity
	}
	switch crit {
	case forecast.FreeFirst:
		return p.pickFreeFirst(job, cands, tiers), ""
	case forecast.Cheapest:
		return p.pickCheapest(job, cands, tiers), ""
	}
	pl := p.pickLeastHeld(job, cands)
	pl.why = "least-held: " + pl.why
	return pl, ""
}

// within is the latest finish the tolerance admits when the earliest is e.
// With Options.SplitBacklog, the split window may be wider (backlog.go).
func (p *Pool) within(job forecast.JobRequest, e int64) int64 {
	w := withinBy(p.opts.Tolerance, job, e)
	if s := p.splitSlack(job); s > 0 {
		w = max(w, addSat(e, s))
	}
	return w
}

// withinBy is the latest finish tolerance tol admits when the earliest is e.
func withinBy(tol float64, job forecast.JobRequest, e int64) int64 {
	slack := math.Floor(tol * float64(job.Walltime))
	if !(slack < float64(maxDuration)) {
		return math.MaxInt64
	}
	return addSat(e, int64(slack))
}

// heldCandidates runs every sweep of the job and returns each one's
// earliest start that finishes within the tolerance of the earliest finish
// of all, and no later than last. A sweep stops once its start cannot
// finish within that window (the window only shrinks).
func (p *Pool) heldCandidates(job forecast.JobRequest, tiers []float64, last int64) ([]candidate, bool) {
	return p.candidatesBy(job, tiers, last, p.within)
}

// candidatesBy is heldCandidates with the window of a candidate ending at
// end given by window (math.MaxInt64: every start up to last).
func (p *Pool) candidatesBy(job forecast.JobRequest, tiers []float64, last int64, window func(forecast.JobRequest, int64) int64) ([]candidate, bool) {
	return p.candidatesOf(job, p.allSpecs(job, tiers), last, window)
}

// candidatesOf is candidatesBy over the given sweeps of the job.
func (p *Pool) candidatesOf(job forecast.JobRequest, specs []sweepSpec, last int64, window func(forecast.JobRequest, int64) int64) ([]candidate, bool) {
	var from *startState
	if len(specs) > 1 {
		ok := false
		if from, ok = p.boundSweep(specs); !ok {
			return nil, false
		}
	}
	var found []candidate
	for _, sp := range specs {
		sp.limit, sp.from = math.MaxInt64, from
		if last < math.MaxInt64 {
			sp.limit = last - sp.dur
		}
		t, ok := p.stage1(sp)
		if !ok {
			continue
		}
		c := candidate{start: t, end: addSat(t, sp.dur), dur: sp.dur, sites: sp.sites, tier: sp.tier, caps: p.stage1Caps()}
		found = append(found, c)
		last = min(last, window(job, c.end))
	}
	out := found[:0]
	for _, c := range found {
		if c.end <= last {
			out = append(out, c)
		}
	}
	return out, len(out) > 0
}

// pickLeastHeld realizes every candidate (stage 2) and keeps the best by
// the least-held key; the plan says why it won.
func (p *Pool) pickLeastHeld(job forecast.JobRequest, cands []candidate) plan {
	ws := make([]weighed, len(cands))
	first := 0 // the earliest-finishing allocation, for the explanation
	for i, c := range cands {
		pl := p.choose(job, c)
		sites := p.planSites(pl)
		ws[i] = weighed{pl: pl, held: p.opts.workOf(job.Walltime, sites), cost: p.planCost(job, pl),
			sites: sites, tier: c.tier}
		if pl.end < ws[first].pl.end || (pl.end == ws[first].pl.end && heldLess(ws[i], ws[first])) {
			first = i
		}
	}
	best := 0
	for i := range ws {
		if heldLess(ws[i], ws[best]) {
			best = i
		}
	}
	pl := ws[best].pl
	pl.why = p.whyLeastHeld(job, ws[best], ws[first], len(ws))
	return pl
}

// earliestEnd is the earliest finish among the candidates.
func earliestEnd(cands []candidate) int64 {
	e := int64(math.MaxInt64)
	for _, c := range cands {
		e = min(e, c.end)
	}
	return e
}

// heldLess is the least-held key: hold, finish, sites, cost, faster tier.
func heldLess(a, b weighed) bool {
	if c := cmp.Compare(a.held, b.held); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(a.pl.end, b.pl.end); c != 0 {
		return c < 0
	}
	if a.sites != b.sites {
		return a.sites < b.sites
	}
	if c := cmp.Compare(a.cost, b.cost); c != 0 {
		return c < 0
	}
	return a.tier > b.tier
}

// planCost is what commit would charge for the plan, without taking it.
func (p *Pool) planCost(job forecast.JobRequest, pl plan) float64 {
	var cost float64
	for _, t := range pl.takes {
		_, c := takeCheapest(p.profile(t.node, pl.start, pl.end, job.MaxPrice), t.procs)
		cost += c
	}
	return cost
}

func (p *Pool) planSites(pl plan) int {
	seen := map[int]bool{}
	for _, t := range pl.takes {
		seen[p.nodes[t.node].site] = true
	}
	return len(seen)
}

// workOf is the work one processor of an allocation on sites sites holds,
// in reference seconds: walltime × MultiSiteFactor + (sites-1) ×
// StagingDelay when it spans sites, else walltime.
func (o Options) workOf(walltime int64, sites int) float64 {
	w := float64(walltime)
	if sites > 1 {
		if o.MultiSiteFactor > 1 {
			w *= o.MultiSiteFactor
		}
		w += float64(sites-1) * float64(o.StagingDelay)
	}
	return w
}

func (p *Pool) whyLeastHeld(job forecast.JobRequest, won, first weighed, n int) string {
	hours := func(w weighed) float64 { return float64(job.Procs) * w.held / 3600 }
	if won.pl.end == first.pl.end {
		return fmt.Sprintf("the earliest finish, %d site(s), %.4g reference processor-hours, the least of %d allocations weighed",
			won.sites, hours(won), n)
	}
	return fmt.Sprintf("%d site(s), %.4g reference processor-hours instead of %.4g on %d site(s) for the earliest finish, "+
		"which ends %d s sooner (within %s; %d allocations weighed)",
		won.sites, hours(won), hours(first), first.sites, won.pl.end-first.pl.end, p.whySplit(job), n)
}

// whyEarliest explains an earliest-start or earliest-finish allocation.
func whyEarliest(criterion string) string {
	if criterion == forecast.EarliestFinish {
		return "earliest-finish: no allocation within max_price and max_sites ends sooner"
	}
	return "earliest-start: no allocation within max_price and max_sites starts sooner"
}

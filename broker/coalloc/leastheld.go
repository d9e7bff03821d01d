package coalloc

import (
	"cmp"
	"fmt"
	"math"

	"lookahead/forecast"
)

// The least-held criterion (forecast.LeastHeld, the default): among the
// allocations that finish at most Options.Tolerance × walltime after the
// earliest possible finish E, the one that holds the fewest
// processor-seconds (procs × hold time: the multi-site factor, staging and
// slow nodes all lengthen the hold), then the earliest finish, then the
// cheapest, then the fewest sites, then the faster tier.
//
// The allocations weighed are structured, never all site subsets: one per
// sweep of the job (speed tier t × site limit m, nested: the nodes at least
// t fast, the m largest sites), each at that sweep's earliest start, then
// stage 2's site and node choice. For a given sweep the hold time is fixed,
// so its earliest start is its best allocation by this key; every
// allocation of the job is feasible for some sweep with the same or a
// shorter hold, so the least hold within the window is exact with exact
// tiers. See docs/coalloc.md.

// weighed is one allocation the criterion compares.
type weighed struct {
	pl    plan
	held  int64 // hold time in seconds (procs are the job's, the same for all)
	cost  float64
	sites int
	tier  float64
}

func (p *Pool) selectLeastHeld(job forecast.JobRequest, tiers, exact []float64) (plan, string) {
	cands, ok := p.heldCandidates(job, tiers)
	if !ok && len(tiers) < len(exact) {
		cands, ok = p.heldCandidates(job, exact) // coarse tiers never cost a fit
	}
	if !ok {
		return plan{}, NoFitCapacity
	}
	return p.pickLeastHeld(job, cands), ""
}

// within is the latest finish the tolerance admits when the earliest is e.
func (p *Pool) within(job forecast.JobRequest, e int64) int64 {
	slack := math.Floor(p.opts.Tolerance * float64(job.Walltime))
	if !(slack < float64(maxDuration)) {
		return math.MaxInt64
	}
	return addSat(e, int64(slack))
}

// heldCandidates runs every sweep of the job and returns each one's
// earliest start that finishes within the tolerance of the earliest finish
// of all. A sweep stops once its start cannot finish within the window of
// the earliest finish found so far (the window only shrinks).
func (p *Pool) heldCandidates(job forecast.JobRequest, tiers []float64) ([]candidate, bool) {
	specs := p.allSpecs(job, tiers)
	var from *startState
	if len(specs) > 1 {
		ok := false
		if from, ok = p.boundSweep(specs); !ok {
			return nil, false
		}
	}
	var found []candidate
	earliest := int64(math.MaxInt64)
	for _, sp := range specs {
		sp.limit, sp.from = math.MaxInt64, from
		if len(found) > 0 {
			sp.limit = p.within(job, earliest) - sp.dur
		}
		t, ok := p.stage1(sp)
		if !ok {
			continue
		}
		c := candidate{start: t, end: addSat(t, sp.dur), dur: sp.dur, sites: sp.sites, tier: sp.tier, caps: p.stage1Caps()}
		found = append(found, c)
		earliest = min(earliest, c.end)
	}
	last := p.within(job, earliest)
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
		ws[i] = weighed{pl: pl, held: pl.end - pl.start, cost: p.planCost(job, pl),
			sites: p.planSites(pl), tier: c.tier}
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

// heldLess is the least-held key: hold, finish, cost, sites, faster tier.
func heldLess(a, b weighed) bool {
	if c := cmp.Compare(a.held, b.held); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(a.pl.end, b.pl.end); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(a.cost, b.cost); c != 0 {
		return c < 0
	}
	if a.sites != b.sites {
		return a.sites < b.sites
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

func (p *Pool) whyLeastHeld(job forecast.JobRequest, won, first weighed, n int) string {
	hours := func(w weighed) float64 { return float64(job.Procs) * float64(w.held) / 3600 }
	if won.pl.end == first.pl.end {
		return fmt.Sprintf("least-held: the earliest finish, holding %.4g processor-hours on %d site(s), the least of %d allocations weighed",
			hours(won), won.sites, n)
	}
	return fmt.Sprintf("least-held: holds %.4g processor-hours on %d site(s) instead of %.4g on %d for the earliest finish, "+
		"which ends %d s sooner (within the tolerance of %g × walltime; %d allocations weighed)",
		hours(won), won.sites, hours(first), first.sites, won.pl.end-first.pl.end, p.opts.Tolerance, n)
}

// whyEarliest explains an earliest-start or earliest-finish allocation.
func whyEarliest(criterion string) string {
	if criterion == forecast.EarliestFinish {
		return "earliest-finish: no allocation within max_price and max_sites ends sooner"
	}
	return "earliest-start: no allocation within max_price and max_sites starts sooner"
}

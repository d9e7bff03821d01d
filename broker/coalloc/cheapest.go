package coalloc

import (
	"cmp"
	"fmt"
	"math"

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
// The allocations weighed are structured, as least-held's: per sweep
// (speed tier × site limit) its earliest start, at the free cut and at
// max_price, each up to the bound. A later start of the same sweep may
// cost less where prices change over time; the answer is the cheapest of
// these, not of every start.

// noWindow keeps every candidate up to the bound (no tolerance).
func noWindow(forecast.JobRequest, int64) int64 { return math.MaxInt64 }

// pickCheapest ranks a cheapest job whose least-held candidates at its
// max price are cands (searched with tiers).
func (p *Pool) pickCheapest(job forecast.JobRequest, cands []candidate, tiers []float64) plan {
	e := earliestEnd(cands)
	bound, what := withinBy(p.opts.FreeTolerance, job, e), fmt.Sprintf("within %g × walltime of the earliest finish", p.opts.FreeTolerance)
	if job.Deadline > 0 {
		bound, what = job.Deadline, "by its deadline"
	}
	if bound < e {
		pl := p.pickBy(job, cands, endFirst)
		pl.why = fmt.Sprintf("cheapest: no allocation finishes by its deadline; the earliest finish, %d s after it", pl.end-job.Deadline)
		return pl
	}
	if cut, ok := p.freeCut(job.MaxPrice); ok {
		p.cut = cut
		fc, found := p.candidatesBy(job, tiers, bound, noWindow)
		var pl plan
		if found {
			pl = p.pickBy(job, fc, costFirst)
		}
		p.cut = nil
		if found {
			pl.why = fmt.Sprintf("cheapest: free time only (%s), the cheapest of %d allocations finishing %s; %s",
				p.freePrices(pl), len(fc), what, p.costNote(job, pl, e))
			return pl
		}
	}
	all, _ := p.candidatesBy(job, tiers, bound, noWindow)
	pl := p.pickBy(job, all, costFirst)
	pl.why = fmt.Sprintf("cheapest: the cheapest of %d allocations finishing %s (free time alone cannot); %s", len(all), what, p.costNote(job, pl, e))
	return pl
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

package coalloc

import (
	"fmt"
	"slices"
	"strings"

	"lookahead/forecast"
)

// The free-first criterion (forecast.FreeFirst): least-held over free time
// first. Free time is each owner's idle time at that owner's own price:
// at every site, the slots priced at or below the site's free price (its
// forecast's free_price, the owner's base; else its lowest slot price).
// Dearer slots are time a queued local job is forecast to hold. When
// allocations that take free time only finish within Options.FreeTolerance
// × walltime of the earliest finish E at the job's max_price, least-held
// (with Options.Tolerance) ranks those; only when free time alone cannot
// finish by then does least-held rank every allocation the job's max_price
// allows.
//
// Why: a grid job that buys a local job's forecast time pushes that local
// job back (the owner was paid for it), and on a loaded grid the local
// jobs' wait grows by the grid's appetite. Buying such time only when it
// is needed to finish within the tolerance keeps local jobs where a plain
// site would have kept them (docs/replay.md, issue 20's study). An owner
// whose idle time costs more than another's is still idle: a job that can
// pay it takes it like any free time (issue 33).
//
// The candidates stay structured: the least-held sweeps at max_price, then
// the same sweeps with each site cut at its free price, each bounded by the
// window of E.

// freeCut is the price cut per site of a job's free pass: the rank of the
// dearest price at or below the site's free price, or the job's max_price
// when that is lower. ok is false when max_price is at or below the free
// price of every site with a node the job may use (markBase): the job can
// buy nothing dearer than free time, and free-first is least-held.
func (p *Pool) freeCut(maxPrice float64) ([]int32, bool) {
	cut := make([]int32, len(p.sites))
	ok := false
	for s := range p.sites {
		free := p.sites[s].free
		if freeGridWide {
			free = p.lowestFree()
		}
		cut[s] = p.maxRank(min(maxPrice, free))
		ok = ok || (free < maxPrice && slices.ContainsFunc(p.sites[s].classes, func(c int32) bool { return p.sc.classBase[c] }))
	}
	return cut, ok
}

// pickFreeFirst ranks a free-first job whose least-held candidates at its
// max price are cands (searched with tiers).
func (p *Pool) pickFreeFirst(job forecast.JobRequest, cands []candidate, tiers []float64) plan {
	e := earliestEnd(cands)
	if cut, ok := p.freeCut(job.MaxPrice); ok {
		if w := p.freeWindow(job, e); w >= e {
			p.cut = cut // the searches, stage 2 and the costs see free time only
			fc, found := p.heldCandidates(job, tiers, w)
			var pl plan
			if found {
				pl = p.pickLeastHeld(job, fc)
			}
			p.cut = nil
			if found {
				p.spentBy(job, e, fc)
				pl.why = fmt.Sprintf("free-first: free time only (%s; within %s), %s", p.freePrices(pl), p.freeRule(), pl.why)
				if pl.end > e {
					pl.why += fmt.Sprintf("; buying local jobs' forecast time could finish %d s sooner", pl.end-e)
				}
				return pl
			}
		}
		if p.opts.freeFallback() == FreeFallbackCheapest {
			bound := p.within(job, e)
			pl := p.cheapestWithin(job, cands, tiers, e, bound, fmt.Sprintf("within %g × walltime of the earliest finish", p.opts.Tolerance))
			pl.why = fmt.Sprintf("free-first: free time cannot finish within %s, so local jobs' forecast time too, the least of it: %s",
				p.freeRule(), pl.why)
			return pl
		}
		pl := p.pickLeastHeld(job, cands)
		pl.why = fmt.Sprintf("free-first: free time cannot finish within %s, so local jobs' forecast time too (%s): %s",
			p.freeRule(), p.freePrices(pl), pl.why)
		return pl
	}
	pl := p.pickLeastHeld(job, cands)
	pl.why = "free-first: max_price buys free time only: " + pl.why
	return pl
}

// freeWindow is the latest finish free-first waits for free time: the
// free tolerance after the earliest finish e, and never past the job's
// deadline (when it has one, and e meets it).
func (p *Pool) freeWindow(job forecast.JobRequest, e int64) int64 {
	w := withinBy(p.opts.FreeTolerance, job, e)
	if spent := p.spent(job); spent > 0 {
		if w-e < spent {
			return e - 1 // the job waited its free tolerance out: no free pass
		}
		w -= spent
	}
	if p.opts.FreeWait > 0 {
		w = min(w, addSat(e, p.opts.FreeWait))
	}
	if job.Deadline > 0 {
		w = min(w, max(job.Deadline, e))
	}
	return w
}

// freePrices names the free price of each site the plan uses, for the why.
func (p *Pool) freePrices(pl plan) string {
	var parts []string
	for _, t := range pl.takes {
		s := &p.sites[p.nodes[t.node].site]
		if part := fmt.Sprintf("%g on %s", s.free, s.fc.Site); !slices.Contains(parts, part) {
			parts = append(parts, part)
		}
	}
	return "free price " + strings.Join(parts, ", ")
}

// freeGridWide makes free-first take one free price for the whole grid,
// the lowest of the sites' (the rule before issue 33): the benchmarks'
// baseline of the per-site cut.
var freeGridWide = false

func (p *Pool) lowestFree() float64 {
	low := p.sites[0].free
	for _, s := range p.sites {
		low = min(low, s.free)
	}
	return low
}

// spentBy tells the observer when a free-time answer may stop holding
// with the window since submission: once the wait spent leaves a window that ends before
// one of the free candidates it was picked from (the window only shrinks
// with time, so an answer that bought local jobs' time keeps).
func (p *Pool) spentBy(job forecast.JobRequest, e int64, fc []candidate) {
	if p.opts.FreeWindow != FreeWindowSinceSubmit || job.Submitted <= 0 || p.obs == nil {
		return
	}
	last := e
	for _, c := range fc {
		last = max(last, c.end)
	}
	slack := withinBy(p.opts.FreeTolerance, job, e) - e
	p.obs.expire(job.Submitted + slack - (last - e))
}

// spent is the wait taken from a job's free window: with the window since
// submission, the time since it was submitted; else 0.
func (p *Pool) spent(job forecast.JobRequest) int64 {
	if p.opts.FreeWindow != FreeWindowSinceSubmit || job.Submitted <= 0 || p.opts.NotBefore <= job.Submitted {
		return 0
	}
	return p.opts.NotBefore - job.Submitted
}

// freeRule names the free window in a why (never the time waited, which
// changes every cycle while the answer may not).
func (p *Pool) freeRule() string {
	if p.opts.FreeWindow == FreeWindowSinceSubmit {
		return fmt.Sprintf("%g × walltime of the earliest finish, less the time waited since submission", p.opts.FreeTolerance)
	}
	return fmt.Sprintf("%g × walltime of the earliest finish", p.opts.FreeTolerance)
}

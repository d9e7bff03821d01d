package coalloc

import (
	"fmt"

	"lookahead/forecast"
)

// The free-first criterion (forecast.FreeFirst): least-held over free time
// first. Free time is the grid's cheapest slots, those at the lowest price
// in the cycle's forecasts (every owner's idle time when owners share a
// base price, as under forecast.DefaultPricing: time a queued local job is
// forecast to hold costs more). When allocations that take free time only
// finish within Options.FreeTolerance × walltime of the earliest finish E
// at the job's max_price, least-held (with Options.Tolerance) ranks those;
// only when free time alone cannot finish by then does least-held rank
// every allocation the job's max_price allows.
//
// Why: a grid job that buys a local job's forecast time pushes that local
// job back (the owner was paid for it), and on a loaded grid the local
// jobs' wait grows by the grid's appetite. Buying such time only when it
// is needed to finish within the tolerance keeps local jobs where a plain
// site would have kept them (docs/replay.md, issue 20's study).
//
// The candidates stay structured: the least-held sweeps at max_price, then
// the same sweeps at the free price, each bounded by the window of E.

// freePrice is the lowest slot price of the pool, and whether a job of
// max price maxPrice could buy anything dearer (otherwise free-first is
// least-held).
func (p *Pool) freePrice(maxPrice float64) (float64, bool) {
	if len(p.prices) == 0 || maxPrice <= p.prices[0] {
		return 0, false
	}
	return p.prices[0], true
}

// pickFreeFirst ranks a free-first job whose least-held candidates at its
// max price are cands (searched with tiers).
func (p *Pool) pickFreeFirst(job forecast.JobRequest, cands []candidate, tiers []float64) plan {
	e := earliestEnd(cands)
	if price, ok := p.freePrice(job.MaxPrice); ok {
		free := job
		free.MaxPrice = price
		if fc, ok := p.heldCandidates(free, tiers, withinBy(p.opts.FreeTolerance, job, e)); ok {
			pl := p.pickLeastHeld(free, fc)
			pl.why = fmt.Sprintf("free-first: free time only (price %g, within %g × walltime of the earliest finish), %s", price, p.opts.FreeTolerance, pl.why)
			if pl.end > e {
				pl.why += fmt.Sprintf("; buying dearer time (local jobs' forecast time, or owners who charge more) could finish %d s sooner", pl.end-e)
			}
			return pl
		}
		pl := p.pickLeastHeld(job, cands)
		pl.why = fmt.Sprintf("free-first: free time (price %g) cannot finish within %g × walltime of the earliest finish, so dearer time too: %s", price, p.opts.FreeTolerance, pl.why)
		return pl
	}
	pl := p.pickLeastHeld(job, cands)
	pl.why = "free-first: max_price buys free time only: " + pl.why
	return pl
}

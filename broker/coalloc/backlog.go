package coalloc

import (
	"fmt"
	"math"

	"lookahead/forecast"
)

// The split window (Options.SplitBacklog): when a job could finish sooner
// spread over sites, the multi-site factor and the staging make it hold
// more work than on one site, and on a loaded grid that extra work delays
// the queued work behind it. Waiting Δt longer for one site costs the job
// Δt × its area in the grid's area-weighted response time; the waste it
// avoids, (factor − 1) × its area plus the staging, delays the work
// queued behind it, about the grid's backlog (the queued work over the
// grid's processors), by waste / processors, costing the queue waste ×
// backlog in the same sum. So one site is worth waiting for while Δt <
// (waste per second of walltime) × backlog: least-held's window for
// holding less work grows to SplitBacklog × that when it is wider than
// Tolerance × walltime. With no multi-site factor and no staging the
// window is unchanged (nothing is wasted); on an idle grid too (no
// backlog). docs/coalloc.md, "The split window"; docs/replay.md, "Issue
// 33's study, fifth round", measures it.

// Backlog is the grid's backlog the split window weighs, in seconds: the
// work local jobs are forecast to hold from notBefore (slots dearer than
// their site's free price: the stated one, else the lowest slot price of
// all sites, as free-first's cut) and the queued grid jobs' processors ×
// walltime, over the grid's processors. 0 when the grid has none.
func Backlog(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) int64 {
	return backlogOf(memoSites(fcs, nil, notBefore), nil, jobs, notBefore)
}

// backlogOf is Backlog over the sites (memoSites'), each site's held work
// kept in sites[i].held: taken from prev's when its slots are the same
// slice at the same free price and notBefore has not passed a held slot's
// edge since (heldOf.at), else counted over its slots.
func backlogOf(sites []siteMemo, prev []siteMemo, jobs []forecast.JobRequest, notBefore int64) int64 {
	low := lowestPrice(sites)
	var work float64
	var procs int64
	for i := range sites {
		s := &sites[i]
		for _, n := range s.nodes {
			procs += int64(n.Procs)
		}
		free := s.freePrice(low)
		if i < len(prev) && prev[i].name == s.name && sameSlice(prev[i].slots, s.slots) && prev[i].held.holds(free, notBefore) {
			s.held = prev[i].held
		} else {
			s.held = heldIn(s.slots, free, notBefore)
		}
		work += s.held.at(notBefore)
	}
	for _, j := range jobs {
		work += float64(j.Procs) * float64(j.Walltime)
	}
	if procs <= 0 {
		return 0
	}
	return int64(min(work/float64(procs), float64(maxDuration)))
}

// heldOf is the work a site's local jobs are forecast to hold from an
// instant on, kept while time passes: from `from` to `until` (the next
// edge of a held slot) it falls by `rate` processor-seconds per second.
type heldOf struct {
	free        float64 // the free price it was counted at
	work        float64 // processor-seconds held from `from` on
	rate        float64 // processors held at `from`
	from, until int64
	ok          bool
}

// heldIn counts the slots dearer than free from notBefore on.
func heldIn(slots []forecast.Slot, free float64, notBefore int64) heldOf {
	h := heldOf{free: free, from: notBefore, until: math.MaxInt64, ok: true}
	for _, sl := range slots {
		if sl.Price <= free || sl.End <= notBefore {
			continue
		}
		start := max(sl.Start, notBefore)
		h.work += float64(sl.Procs) * float64(sl.End-start)
		if sl.Start <= notBefore {
			h.rate += float64(sl.Procs)
			h.until = min(h.until, sl.End)
		} else {
			h.until = min(h.until, sl.Start)
		}
	}
	return h
}

// holds: the count still applies at notBefore and free price free.
func (h heldOf) holds(free float64, notBefore int64) bool {
	return h.ok && h.free == free && notBefore >= h.from && notBefore <= h.until
}

// at is the work held from t on (h.holds at t).
func (h heldOf) at(t int64) float64 {
	return max(h.work-h.rate*float64(t-h.from), 0)
}

// backlogBand is how far the backlog may move before the incremental
// planner takes the new one (and plans every job again): a fraction of
// the backlog it plans with. Within it the answers keep the old figure,
// so a backlog that hovers does not re-plan the queue each cycle.
const backlogBand = 0.25

// KeptBacklog is the backlog a cycle plans with when the last cycle
// planned with last (had: there was one) and the grid's is now: the last
// cycle's while now lies within backlogBand of it, else now. The
// incremental planner keeps its backlog so; a caller planning each cycle
// on a new pool (Pool.SetBacklog) keeps it the same way to get the same
// answers.
func KeptBacklog(last, now int64, had bool) int64 {
	if had && math.Abs(float64(now-last)) <= backlogBand*float64(last) {
		return last
	}
	return now
}

// SetBacklog sets the backlog the split window weighs on this pool, in
// seconds (PlanQueue sets Backlog's; Place alone weighs none).
func (p *Pool) SetBacklog(b int64) { p.backlog = max(b, 0) }

// splitSlack is how much later than the earliest finish the split window
// lets a job finish to hold less work (0: the window is Tolerance's).
func (p *Pool) splitSlack(job forecast.JobRequest) int64 {
	if p.opts.SplitBacklog <= 0 || p.backlog <= 0 || job.Walltime <= 0 {
		return 0
	}
	waste := p.opts.workOf(job.Walltime, 2)/float64(job.Walltime) - 1
	return int64(min(p.opts.SplitBacklog*waste*float64(p.backlog), float64(maxDuration)))
}

// whySplit names least-held's window in a why: the split window when it
// is wider than the tolerance's.
func (p *Pool) whySplit(job forecast.JobRequest) string {
	s := p.splitSlack(job)
	if float64(s) <= p.opts.Tolerance*float64(job.Walltime) {
		return fmt.Sprintf("the tolerance of %g × walltime", p.opts.Tolerance)
	}
	return fmt.Sprintf("the split window of %d s: a split's waste delays the grid's backlog of %d s", s, p.backlog)
}

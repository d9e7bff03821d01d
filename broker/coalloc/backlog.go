package coalloc

import (
	"fmt"

	"lookahead/forecast"
)

// The split window (Options.SplitBacklog, experimental, for studies): when
// a job could finish sooner spread over sites, the multi-site factor and
// the staging make it hold more work than on one site, and on a loaded
// grid that extra work delays the queued work behind it. Waiting Δt
// longer for one site costs the job Δt × its area in the grid's
// area-weighted response time; the waste it avoids, (factor − 1) × its
// area plus the staging, delays the work queued behind it, about the
// grid's backlog (the queued work over the grid's processors), by waste /
// processors, costing the queue waste × backlog in the same sum. So one
// site is worth waiting for while Δt < (waste per second of walltime) ×
// backlog: least-held's window for holding less work grows to
// SplitBacklog × that when it is wider than Tolerance × walltime. With no
// multi-site factor and no staging the window is unchanged (nothing is
// wasted); on an idle grid too (no backlog). docs/replay.md, "Issue 33's
// study, fifth round", measures it.

// queuedLocalWork is the work local jobs are forecast to hold from
// NotBefore (slots dearer than their site's free price), in
// processor-seconds, and the grid's processors. Called on a fresh pool.
func (p *Pool) queuedLocalWork() (work float64, procs int64) {
	for s := range p.sites {
		for _, n := range p.sites[s].fc.Nodes {
			procs += int64(n.Procs)
		}
		for _, i := range p.sites[s].nodes {
			for _, pc := range p.nodes[i].pieces {
				if pc.procs > 0 && pc.price > p.sites[s].free {
					work += float64(pc.procs) * float64(pc.end-pc.start)
				}
			}
		}
	}
	return work, procs
}

// setBacklog sets the pool's backlog for the split window: the local
// jobs' queued work and the grid queue's (processors × walltime) over the
// grid's processors, in seconds. Only with SplitBacklog (the computation
// reads every slot).
func (p *Pool) setBacklog(jobs []forecast.JobRequest) {
	if p.opts.SplitBacklog <= 0 {
		return
	}
	work, procs := p.queuedLocalWork()
	for _, j := range jobs {
		work += float64(j.Procs) * float64(j.Walltime)
	}
	if procs > 0 {
		p.backlog = int64(min(work/float64(procs), float64(maxDuration)))
	}
}

// splitSlack is how much later than the earliest finish the split window
// lets a job finish to hold less work (0: the window is Tolerance's).
func (p *Pool) splitSlack(job forecast.JobRequest) int64 {
	if p.opts.SplitBacklog <= 0 || p.backlog <= 0 || job.Walltime <= 0 {
		return 0
	}
	waste := p.opts.workOf(job.Walltime, 2)/float64(job.Walltime) - 1
	return int64(min(p.opts.SplitBacklog*waste*float64(p.backlog), float64(maxDuration)))
}

// whySplit names the split window in a least-held why, when it is wider
// than the tolerance's.
func (p *Pool) whySplit(job forecast.JobRequest) string {
	s := p.splitSlack(job)
	if float64(s) <= p.opts.Tolerance*float64(job.Walltime) {
		return fmt.Sprintf("the tolerance of %g × walltime", p.opts.Tolerance)
	}
	return fmt.Sprintf("the split window of %d s: a split's waste delays the grid's backlog of %d s", s, p.backlog)
}

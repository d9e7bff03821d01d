package sim

import (
	"math"
	"math/bits"
)

// backfill is Maui 3.3.1's backfill after the priority pass
// (MQueueBackFill, MBFGetWindow, MBFFirstFit or MBFBestFit), shortest
// window first:
//
//   - Every node with free processors now has an available time (nodeAvail):
//     how long its free count stays as it is now, as Maui's availability
//     ranges see it.
//   - A window is the shortest available time longer than the previous
//     window's; it holds the nodes whose available time reaches it and
//     offers their free processors.
//   - The waiting jobs without a reservation whose walltime fits the window
//     and whose processors do not exceed what it offered when it was
//     opened (the first BACKFILLDEPTH of them, when set) are tried on its
//     nodes: FIRSTFIT in queue order; BESTFIT the one with the most
//     processors (or processor-seconds, or seconds: BACKFILLMETRIC) first,
//     again and again, each counted against what the window still offers.
//
// Starting a job changes its nodes' available times, so each window is
// measured after the previous one's starts.
func (e *Engine) backfill(queue []*job) {
	p := &e.prof
	if (p.steps[0].free <= 0 && !e.srACL) || e.used >= e.total {
		return // (the profile counts windows that jobs inside an ACL may use)
	}
	e.bfAll = e.srACL
	cand := e.windowNodes()
	e.bfAll = false
	// the jobs that may backfill, compact: a window scans them all
	jobs, least := e.bfJobs[:0], math.MaxInt
	free := p.steps[0].free
	cut := e.policy.BFDepth == 0 && !e.noEarlyStop
	var until []int64
	if cut && free <= 2*len(queue) {
		until = e.fitUntil() // else fitsFrom per job costs less than the table
	}
	caps := e.fs != nil && e.fs.caps
	e.bfStarted = e.bfStarted[:0]
	for k, j := range queue {
		if j.started || j.held || (caps && e.fsCapped(j)) || e.noBackfill(j) {
			continue
		}
		acl := e.bfACL(j)
		if j.Procs > free && !acl {
			continue
		}
		end := sat(e.now, j.Walltime)
		if cut && !acl {
			// one that does not fit now on the profile, which only loses
			// processors in this pass, fits would refuse in every window
			// (it stays when BACKFILLDEPTH counts the tries)
			if until != nil {
				if end > until[j.Procs] {
					continue
				}
			} else if ok, _ := p.fitsFrom(0, j.Procs, j.Walltime); !ok {
				continue
			}
		}
		jobs = append(jobs, bfJob{procs: j.Procs, end: end, j: j, pos: k})
		least = min(least, j.Procs)
	}
	e.bfJobs = jobs
	prev := e.now
	for prev < never && len(jobs) > 0 {
		if e.windowBlocked() {
			return // Maui's window has no nodes: backfill ends
		}
		w, procs, found := e.nextWindow(cand, prev)
		if !found {
			return
		}
		prev = w
		if procs < least {
			continue // no job is narrow enough for this window or a later one
		}
		if jobs = e.fillWindow(jobs, cand, w, procs); e.used >= e.total {
			return
		}
	}
}

// fitUntil returns u with u[q], for q up to the processors free now, the
// end of the profile's first step from now with fewer than q free (never
// when none): a job of q processors fits now for its whole walltime
// (profile.fitsFrom(0, …)) exactly when now + walltime <= u[q].
func (e *Engine) fitUntil() []int64 {
	p := &e.prof
	free := p.steps[0].free
	if cap(e.untilBuf) <= free {
		e.untilBuf = make([]int64, free+1, 2*free+1)
	}
	u := e.untilBuf[:free+1]
	low := free // fewest free so far: u[q] is set for every q > low
	for _, s := range p.steps[1:] {
		for ; low > max(s.free, 0); low-- {
			u[low] = s.t
		}
		if low == 0 {
			break
		}
	}
	for ; low > 0; low-- {
		u[low] = never
	}
	u[0] = never
	return u
}

// windowNodes lists the nodes with free processors now and their
// available times, in the MINRESOURCE order.
func (e *Engine) windowNodes() []bfNode {
	cand := e.bfNodes[:0]
	for k, word := range e.freeBits {
		for ; word != 0; word &= word - 1 {
			i := e.order[k<<6|bits.TrailingZeros64(word)]
			if a := e.nodeAvail(i); a > 0 && e.inPart(i) {
				e.candPos[i] = len(cand)
				cand = append(cand, bfNode{i: i, avail: a, held: e.holdsAt(i, e.now)})
			}
		}
	}
	e.bfNodes = cand
	return cand
}

// nextWindow opens the shortest window longer than prev: its end, the
// processors its nodes offer now, and whether there is one.
func (e *Engine) nextWindow(cand []bfNode, prev int64) (int64, int, bool) {
	w, found, procs := int64(never), false, 0
	for _, c := range cand {
		if c.avail > prev && c.avail <= w {
			w, found = c.avail, true
		}
	}
	if !found {
		return 0, 0, false
	}
	for k := range cand {
		c := &cand[k]
		c.in = c.avail >= w
		if c.in {
			n := &e.nodes[c.i]
			procs += max(n.procs-n.used-c.held, 0)
		}
	}
	return w, procs, true
}

// fillWindow tries the jobs whose walltime fits window w on its nodes and
// returns the jobs left for later windows.
//
// A job tried in a window and not started cannot start in a later one: a
// later window's nodes are a subset of this one's (nodes outside it are
// not touched, so their available time does not grow), and free
// processors, the window's offer and the profile only shrink as jobs
// start. So every job tried here leaves the list; with BACKFILLDEPTH, jobs
// past the depth are not tried and stay.
func (e *Engine) fillWindow(jobs []bfJob, cand []bfNode, w int64, procs int) []bfJob {
	try, live := e.bfTry[:0], jobs[:0]
	for _, b := range jobs {
		switch {
		case b.end > w:
			live = append(live, b)
		case b.procs > procs:
			// not selected for this window, nor for any later one
		case e.policy.BFDepth > 0 && len(try) >= e.policy.BFDepth:
			live = append(live, b)
		default:
			try = append(try, b)
		}
	}
	e.bfTry = try
	if e.policy.Backfill == BestFit {
		e.bestFit(try, cand, procs)
	} else {
		for _, b := range try {
			if e.limitBlocked(b.j) {
				continue
			}
			if hosts, ok := e.fits(b, cand); ok {
				e.startBackfill(b, hosts, cand)
				if e.used >= e.total {
					break
				}
			}
		}
	}
	return live
}

// bestFit is MBFBestFit: again and again, the job worth most (by
// BACKFILLMETRIC; the first in queue order among equals) that fits the
// window's nodes starts, until none does; a job wider than what the
// window still offers, or not fitting its nodes, is out for this window.
func (e *Engine) bestFit(try []bfJob, cand []bfNode, offer int) {
	out := make([]bool, len(try))
	for e.used < e.total {
		best, bestV := -1, int64(0)
		var bestHosts []hostUse
		for k, b := range try {
			if out[k] || b.j.started {
				continue
			}
			if b.procs > offer {
				out[k] = true
				continue
			}
			v := e.bfValue(b.j)
			if v <= bestV {
				continue
			}
			if e.limitBlocked(b.j) {
				out[k] = true
				continue
			}
			hosts, ok := e.fits(b, cand)
			if !ok {
				out[k] = true
				continue
			}
			best, bestV, bestHosts = k, v, hosts
		}
		if best < 0 {
			return
		}
		out[best] = true
		e.startBackfill(try[best], bestHosts, cand)
		offer -= try[best].procs
	}
}

// bfValue is a job's worth to BESTFIT (BACKFILLMETRIC).
func (e *Engine) bfValue(j *job) int64 {
	switch e.policy.BFMetric {
	case MetricProcSeconds:
		return int64(j.Procs) * j.Walltime
	case MetricSeconds:
		return j.Walltime
	}
	return int64(j.Procs)
}

// fits reports where a backfill candidate starts now on the window's nodes,
// if it does.
func (e *Engine) fits(b bfJob, cand []bfNode) ([]hostUse, bool) {
	p := &e.prof
	if e.bfACL(b.j) {
		e.acl = b.j
		defer func() { e.acl = nil }()
		return e.pickIn(b.j, cand, e.affinity(b.j))
	}
	if p.steps[0].free < b.procs {
		return nil, false
	}
	if ok, _ := p.fitsFrom(0, b.j.Procs, b.j.Walltime); !ok {
		return nil, false // would delay a reservation held on the profile
	}
	return e.pickIn(b.j, cand, nil)
}

// startBackfill starts b's job on hosts and measures its nodes' available
// times again.
func (e *Engine) startBackfill(b bfJob, hosts []hostUse, cand []bfNode) {
	j := b.j
	e.bfStarted = append(e.bfStarted, b.pos)
	e.start(j, hosts)
	e.stale++
	e.prof.add(e.now, sat(e.now, j.Walltime), -j.pool)
	if e.bfACL(j) {
		e.unshare(j)
	}
	e.bfAll = e.srACL
	for _, h := range hosts {
		cand[e.candPos[h.node]].avail = e.nodeAvail(h.node)
	}
	e.bfAll = false
}

// bfJob is a job that may backfill: its processors and walltime end, kept
// compact for the per-window scans.
type bfJob struct {
	procs int
	end   int64
	j     *job
	pos   int // in the queue backfill was given
}

// bfNode is a node with free processors during backfill: its available
// time, what holds take of it now and whether it is in the window being
// filled.
type bfNode struct {
	i     int
	avail int64
	held  int
	in    bool
}

// pickIn is pickHosts restricted to a backfill window's nodes: those whose
// available time reached the window when it was opened; the nodes where
// prefer > 0 first (a job inside a window's ACL: affinity).
func (e *Engine) pickIn(j *job, cand []bfNode, prefer []int) ([]hostUse, bool) {
	if e.policy.NodeAlloc == MinResource && prefer == nil {
		return e.pickCand(j, cand)
	}
	return e.pick(j, sat(e.now, j.Walltime), func(i int) bool {
		k := e.candPos[i]
		return k < len(cand) && cand[k].i == i && cand[k].in
	}, prefer)
}

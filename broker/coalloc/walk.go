package coalloc

import (
	"math"
	"slices"

	"lookahead/forecast"
)

// walk is one Incremental.Plan over a fresh pool: the queue in priority
// order, each job either keeping its cached answer (re-applied to the pool
// so that the jobs after it see what it takes) or planned again.
type walk struct {
	p    *Pool
	prev *memo  // nil: every job is planned from scratch
	why  string // why prev is nil
	d    *delta
	// index maps each site's node names to their position in the site's
	// list of pool nodes (built on first use).
	index  []map[string]int32
	siteOf map[string]int32
	// noFit lists requests that did not fit this cycle and that no other
	// listed one dominates (see dominates).
	noFit   []forecast.JobRequest
	floors  []floorOf
	classes []bool // scratch: the classes the current job may use
	// moved lists the nodes of the sites that came or left since the last
	// cycle (their speeds are tiers of the jobs that may use them).
	moved []forecast.Node
	// freeMoved: a site's free price differs from the last cycle's, so
	// every free-first answer is planned again.
	freeMoved bool
	// streak counts the jobs in a row the difference sent to be planned
	// again (see maxStreak).
	streak int
	// cut: the forecasts' differences are taken before it only, the
	// latest reach of last cycle's answers (see diffSite).
	cut int64
	// scratch of diffSite: pend holds the differences gathered (their
	// edges in steps) until flushDiff; hint is the position on the site
	// of the node after the last one diffed
	runs  []runPair
	edges []priceEdge
	steps []dedge
	pend  []pending
	hint  int
}

func newWalk(p *Pool, prev *memo, fcs []forecast.Forecast, notBefore int64) *walk {
	w := &walk{p: p, why: fullWhy(prev, fcs, notBefore)}
	if w.why != "" {
		return w
	}
	w.prev, w.d = prev, newDelta(notBefore, p.nodeClass)
	w.cut = prev.cut()
	kept := map[string]bool{}
	for i, f := range fcs {
		var old []forecast.Slot // a site that came: everything it offers is new
		if k := slices.IndexFunc(prev.sites, func(s siteMemo) bool { return s.name == f.Site }); k >= 0 {
			old, kept[f.Site] = prev.sites[k].slots, true
		}
		if !sameSlots(f.Slots, old) {
			w.diffSite(int32(i), old, f.Slots)
		}
	}
	w.flushDiff()
	for _, s := range prev.sites {
		if !kept[s.name] {
			w.d.left(s.nodes, s.slots) // a site that left: what it offered is lost
			w.moved = append(w.moved, s.nodes...)
		}
	}
	for _, f := range fcs {
		if !kept[f.Site] {
			w.moved = append(w.moved, f.Nodes...)
		}
	}
	return w
}

func (w *walk) site(name string) (int32, bool) {
	if w.siteOf == nil {
		w.siteOf = make(map[string]int32, len(w.p.sites))
		for i, s := range w.p.sites {
			w.siteOf[s.fc.Site] = int32(i)
		}
	}
	s, ok := w.siteOf[name]
	return s, ok
}

func (w *walk) node(site int32, name string) (int32, bool) {
	i, ok := w.nodePos(site, name)
	if !ok {
		return 0, false
	}
	return w.p.sites[site].nodes[i], true
}

// nodePos is the position of the named node in its site's list.
func (w *walk) nodePos(site int32, name string) (int32, bool) {
	if w.index == nil {
		w.index = make([]map[string]int32, len(w.p.sites))
	}
	if w.index[site] == nil {
		m := make(map[string]int32, len(w.p.sites[site].nodes))
		for i, n := range w.p.sites[site].nodes {
			m[w.p.nodes[n].name] = int32(i)
		}
		w.index[site] = m
	}
	i, ok := w.index[site][name]
	return i, ok
}

// run plans the queue and returns the cache for the next cycle.
func (w *walk) run(jobs []forecast.JobRequest, st *Stats) *memo {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	queueCmp := w.p.opts.jobCmp()
	slices.SortStableFunc(order, func(a, b int) int { return queueCmp(jobs[a], jobs[b]) })
	next := &memo{notBefore: w.p.opts.NotBefore, input: slices.Clone(jobs),
		out: make([]forecast.Allocation, len(jobs)), queue: make([]entry, 0, len(jobs))}
	var old []entry
	if w.prev != nil {
		old = w.prev.queue
	}
	fresh := &st.Full
	if w.prev != nil {
		fresh = &st.New
	}
	oi := 0
	for _, i := range order {
		job := jobs[i]
		for oi < len(old) && queueCmp(old[oi].job, job) < 0 {
			w.gone(&old[oi]) // left the queue
			oi++
		}
		var e entry
		switch {
		case oi < len(old) && queueCmp(old[oi].job, job) == 0 && sameJob(old[oi].job, job):
			e = w.keep(&old[oi], st)
			oi++
		default:
			e = w.plan(job, nil, fresh, st)
		}
		next.queue = append(next.queue, e)
		next.out[i] = e.alloc
	}
	return next
}

// keep re-uses o's answer when nothing it depends on changed, else plans
// the job again.
func (w *walk) keep(o *entry, st *Stats) entry {
	if w.d != nil && (len(w.d.first) > maxDelta || w.d.work > maxHitWork || w.streak >= maxStreak) {
		w.d = nil // the change spread: every job from here on is planned again
	}
	if w.d == nil {
		return w.plan(o.job, o, &st.Changed, st)
	}
	if !o.timeValid(w.p.opts.NotBefore) {
		return w.plan(o.job, o, &st.Time, st)
	}
	if w.nodesMoved(o) || (w.freeMoved && restsOnFreePrices(w.p.criterion(o.job))) {
		return w.plan(o.job, o, &st.Changed, st)
	}
	if o.reach > math.MinInt64 && w.touched(o) && !w.onlyLostElsewhere(o) {
		if !w.windowsUntouched(o) {
			w.streak++
			return w.plan(o.job, o, &st.Changed, st)
		}
		st.Unreached++
	}
	w.streak = 0
	if !o.alloc.Placed() {
		st.Reused++
		w.learn(o.job, o.alloc, o.lower)
		return *o
	}
	e, ok := w.reapply(o)
	if !ok {
		return w.plan(o.job, o, &st.Changed, st)
	}
	st.Reused++
	w.learn(e.job, e.alloc, e.lower)
	return e
}

// learn keeps what this cycle's answer for job tells about the jobs after
// it (see dominate.go).
func (w *walk) learn(job forecast.JobRequest, a forecast.Allocation, lower int64) {
	switch {
	case a.Error == NoFitCapacity:
		w.addNoFit(job)
	case a.Placed():
		w.addFloor(job, lower)
	}
}

// touched reports whether the slots o's job may use differ before its
// reach (for a job that did not fit: gained processors).
func (w *walk) touched(o *entry) bool {
	placed := o.alloc.Placed()
	return w.d.touches(w.usable(o.job), o.job.MaxPrice, o.reach, !placed) ||
		(placed && w.d.lostGone(o.job, o.reach))
}

// plan places job on the pool (or finds that a job it dominates did not
// fit), counts it under why, and adds to the difference what the old
// answer took and the new one takes.
func (w *walk) plan(job forecast.JobRequest, old *entry, why *int, st *Stats) entry {
	*why++
	o := &observer{expires: math.MaxInt64}
	var a forecast.Allocation
	if reason, ok := w.dominated(job); ok {
		st.Skipped++
		a, o.lower, o.reach = forecast.Allocation{Job: job.ID, Error: reason}, lowerNone, math.MaxInt64
	} else {
		w.p.floor = w.floorFor(job)
		a = w.p.placeWatched(job, o)
		w.p.floor = math.MinInt64
	}
	w.learn(job, a, o.lower)
	if old != nil && !sameAlloc(old.alloc, a) {
		st.Differ++
	}
	if w.d != nil && (old == nil || !slices.Equal(old.taken, o.taken)) {
		// (taking again just what it took before changes nothing)
		if old != nil {
			w.gone(old)
		}
		w.apply(o.taken, 1)
	}
	return entry{job: job, alloc: a, lower: min(o.lower, o.expires), reach: o.reach, taken: o.taken, wins: o.wins}
}

// gone: what o took last cycle is not taken now.
func (w *walk) gone(o *entry) {
	if w.d != nil {
		w.apply(o.taken, -1)
	}
}

// apply adds sign × the taken pieces to the difference (taken pieces are
// negative: what a job takes now lowers what is left).
func (w *walk) apply(ts []taken, sign int64) {
	for _, t := range ts {
		s, ok := w.site(t.site)
		if !ok {
			continue // a site that left: nothing of it is in this pool
		}
		if n, ok := w.node(s, t.node); ok {
			w.d.add(n, t.pc.price, t.pc.start, t.pc.end, sign*t.pc.procs)
		}
	}
}

// reapply takes o's allocation again on this cycle's pool: the same start,
// end, processors per node and reason (Why); the cost and the pieces are
// recomputed.
func (w *walk) reapply(o *entry) (entry, bool) {
	pl := plan{start: o.alloc.Start, end: o.alloc.End, takes: make([]take, 0, len(o.alloc.Parts)), why: o.alloc.Why}
	for _, part := range o.alloc.Parts {
		s, ok := w.site(part.Site)
		if !ok {
			return entry{}, false
		}
		n, ok := w.node(s, part.Node)
		if !ok {
			return entry{}, false
		}
		pl.takes = append(pl.takes, take{node: n, procs: int64(part.Procs)})
	}
	obs := &observer{}
	w.p.observe(obs)
	a := w.p.commit(o.job, pl)
	w.p.observe(nil)
	if !a.Placed() {
		return entry{}, false
	}
	e := *o
	e.alloc, e.taken = a, obs.taken
	return e, true
}

// restsOnFreePrices: the criterion's answers depend on the owners' free
// prices (see freeMoved).
func restsOnFreePrices(crit string) bool {
	return crit == forecast.FreeFirst || crit == forecast.Cheapest
}

// usable marks the node classes that meet job's requirements.
func (w *walk) usable(job forecast.JobRequest) []bool {
	if len(w.classes) != len(w.p.classes) {
		w.classes = make([]bool, len(w.p.classes))
	}
	for i, c := range w.p.classes {
		w.classes[i] = c.speed >= job.MinSpeed && c.memMB >= job.MemMB && hasAll(c.features, job.Features)
	}
	return w.classes
}

func sameAlloc(a, b forecast.Allocation) bool {
	return a.Job == b.Job && a.Start == b.Start && a.End == b.End && a.Cost == b.Cost &&
		a.Error == b.Error && slices.Equal(a.Parts, b.Parts)
}

package sim

import (
	"cmp"
	"slices"
)

// schedule is one scheduling pass at e.now (see the package comment).
func (e *Engine) schedule() {
	if len(e.srs) > 0 {
		e.refreshStanding()
	}
	if e.jl != nil {
		e.jlIterate() // Maui's node job tables (jobtable.go)
	}
	// every pass is a Maui iteration, even one that starts nothing; with
	// a poll interval Maui also iterates where nothing happens
	e.prevIter, e.lastIter = e.lastIter, e.now
	if e.policy.Poll > 0 && e.now-e.policy.Poll >= e.origin {
		e.prevIter = e.now - e.policy.Poll
	}
	if e.planValid {
		e.startPlanned()
		if e.plan.len() > 0 {
			return
		}
		e.planValid = false
	}
	e.compactQueue()
	if len(e.queue) == 0 {
		return
	}
	keep := e.policy.Reservation == Highest
	if e.used >= e.total && !e.keepPlan && !keep && e.lim == nil && !e.fsCapsOn() {
		return // nothing can start now, so no reservation matters yet
	}
	if e.policy.Priority != nil {
		e.prioritize()
	}
	if e.fsCapsOn() {
		e.fsSelect()
	}
	if e.lim != nil {
		e.limitSelect()
	}
	if keep {
		e.renewKept()
	}
	e.buildProfile()
	e.passes++
	full := e.keepPlan && e.unbounded
	if e.parts != nil {
		e.partitionSchedule(keep) // partition.go
		if full {
			e.keep()
		}
		return
	}
	var minAfter []int
	if e.unbounded && !full {
		minAfter = e.suffixMinProcs()
	}
	w, idle := e.priorityPass(full, keep, minAfter)
	if e.lim != nil {
		w, idle = e.limitRedo(w, idle, full, keep, minAfter)
	} else if e.nlim != nil {
		w, idle = e.nodePolicyRedo(w, idle, full, keep) // nodelimits.go
	}
	if idle && e.backfills {
		from := e.backfillFrom(w)
		e.backfill(e.queue[from:w])
		w = e.dropStartedFrom(from, w)
	}
	w = e.hardRound(w)
	clear(e.queue[w:])
	e.queue = e.queue[:w]
	if e.lim != nil {
		e.noteReservations()
	}
	e.dropBlockedHolds()
	if full {
		e.keep()
	}
}

// laterFits reports whether a job after q[k] fits now on the profile, a
// necessary condition for starting in this pass; *next is the first that
// may (none before it does). Reservations only take processors from the
// profile, so a job that does not fit now never fits later in the pass:
// *next only moves forward, and when no later job fits, no reservation
// after q[k] can change what starts (an unbounded pass stops there).
func (e *Engine) laterFits(q []*job, k int, next *int) bool {
	p := &e.prof
	// (a bounded pass asks once; an unbounded one after every
	// reservation, where the cursor below is cheaper)
	if !e.unbounded && !e.noEarlyStop && !e.qsum.anyFits(p) {
		*next = len(q) // no waiting job fits now
		return false
	}
	c0 := max(*next, k+1)
	c := c0
	for ; c < len(q); c++ {
		j := q[c]
		if j.started || j.Procs > p.steps[0].free {
			continue
		}
		if ok, _ := p.fitsFrom(0, j.Procs, j.Walltime); ok {
			break
		}
	}
	*next = c
	if c == len(q) && c0 < c && !e.unbounded {
		// the summary sent this search in vain (jobs it counts started):
		// count again what waits (q's entries between the pass's write
		// and read positions are started jobs or repeats)
		e.qsum.rebuild(q)
	}
	return c < len(q)
}

// startNow starts j now if it fits on the profile and on nodes.
func (e *Engine) startNow(j *job) bool {
	if e.srACL && !e.unbounded && !e.keepPlan && e.inACL(j) {
		return e.startNowACL(j)
	}
	p := &e.prof
	if p.steps[0].free < j.Procs {
		return false
	}
	if ok, _ := p.fitsFrom(0, j.Procs, j.Walltime); !ok {
		return false
	}
	hosts, ok := e.pickHostsFrom(j, sat(e.now, j.Walltime), e.ownRes(j)) // ownRes: partition.go
	if !ok {
		return false
	}
	e.start(j, hosts)
	p.add(e.now, sat(e.now, j.Walltime), -j.pool)
	return true
}

// reserveInPass reserves blocked job j; false when no reservation could be
// made. After IdleJobFound, a reservation starting now is used at once, as
// Maui does (the job may start on it).
func (e *Engine) reserveInPass(j *job, keep, idle bool) bool {
	if e.srACL && e.inACL(j) {
		e.acl = j
		defer func() { e.acl = nil }()
	}
	j.planned = e.reserveJob(j)
	if j.planned == never {
		return false
	}
	e.setHeld(j)
	if idle && j.planned <= e.now && !e.unbounded {
		e.bfFrom = 0 // the profile may get processors back below
		b := e.blocked[len(e.blocked)-1]
		per := slices.Clone(b.per)
		e.dropLastBlocked()
		if e.onProfile {
			e.prof.add(j.planned, sat(j.planned, j.Walltime), j.Procs)
		}
		if hosts, ok := e.pickHostsFrom(j, sat(e.now, j.Walltime), per); ok {
			e.start(j, hosts)
			e.prof.add(e.now, sat(e.now, j.Walltime), -j.pool)
			j.held = false
			return false
		}
		j.planned = e.reserveJob(j)
		if j.planned == never {
			j.held = false
			return false
		}
	}
	if keep {
		e.keepReservation(j)
	}
	return true
}

// keep turns the plan just made into the kept plan: the blocked jobs by
// planned start.
func (e *Engine) keep() {
	clear(e.plan.items)
	e.plan.items = e.plan.items[:0]
	for _, j := range e.queue {
		if j.planned != never {
			e.plan.push(j)
		}
	}
	e.planValid = e.plan.len() > 0
}

// compactQueue drops the jobs startPlanned started from the queue.
func (e *Engine) compactQueue() {
	if e.stale == 0 {
		return
	}
	e.stale = 0
	w := 0
	for _, j := range e.queue {
		if !j.started {
			e.queue[w] = j
			w++
		}
	}
	clear(e.queue[w:])
	e.queue = e.queue[:w]
}

// suffixMinProcs returns m with m[k] the fewest processors any queued job
// from k on asks for (m[len] is more than the cluster has): when fewer are
// free now, no later job can start in this pass.
func (e *Engine) suffixMinProcs() []int {
	if cap(e.sufMin) <= len(e.queue) {
		e.sufMin = make([]int, len(e.queue)+1, 2*len(e.queue)+1)
	}
	m := e.sufMin[:len(e.queue)+1]
	m[len(e.queue)] = e.total + 1
	for k := len(e.queue) - 1; k >= 0; k-- {
		m[k] = min(m[k+1], e.queue[k].Procs)
	}
	return m
}

// startPlanned starts the jobs whose kept plan says now, in plan order. A
// job that does not find its nodes (grid reservations cut them up) moves
// to its next fit on the plan, which delays no other job. Started jobs stay
// in e.queue until compactQueue.
func (e *Engine) startPlanned() {
	p := &e.prof
	for e.plan.len() > 0 && e.plan.peek().planned <= e.now {
		j := e.plan.pop()
		if hosts, ok := e.pickHosts(j, sat(e.now, j.Walltime)); ok {
			e.start(j, hosts)
			e.stale++
			continue
		}
		p.add(j.planned, sat(j.planned, j.Walltime), j.Procs)
		j.planned = p.earliest(p.nextAfter(e.now), j.Procs, j.Walltime)
		if j.planned != never {
			p.add(j.planned, sat(j.planned, j.Walltime), -j.Procs)
			e.plan.push(j)
		}
	}
}

// reserveBlocked holds the earliest fit of a blocked job on the profile, so
// that later jobs plan around it. A job blocked only by node shape (the
// profile fits now) is held from the next profile step.
func (e *Engine) reserveBlocked(j *job) int64 {
	p := &e.prof
	e.onProfile = false
	t := p.earliest(e.now, j.Procs, j.Walltime)
	if e.keepPlan || e.unbounded {
		// conservative: a plan on the processor profile (node-level holds
		// for every waiting job would cost too much)
		if t == e.now {
			t = p.earliest(p.nextAfter(e.now), j.Procs, j.Walltime)
		}
		if t != never {
			p.add(t, sat(t, j.Walltime), -j.Procs)
		}
		return t
	}
	if t == never {
		return never
	}
	if len(e.blocked) == 0 && len(e.resvs) == 0 {
		// Nothing is reserved yet: every node's free count only grows
		// with time, where Maui's ranges come down to the free count at
		// the earliest time the processor profile fits (holdNodes).
		// It books nothing beyond what is free, so the profile can hold
		// it too (still an upper bound of what any node offers), which
		// spares later checks.
		if t = e.holdNodes(j, t); t != never && (!e.chunksByMaui(j) || e.blocked[len(e.blocked)-1].booked() == j.Procs) {
			p.add(t, sat(t, j.Walltime), -j.Procs)
			e.onProfile = true
		} // (a chunked booking short of the job lives on its nodes only)
		return t
	}
	// Node-level, as Maui: the reservation lives on its nodes only. The
	// profile keeps running jobs and grid reservations, a necessary
	// condition for every later check; Maui may book a node beyond what
	// it keeps free (see reserveRanges), which a processor count cannot
	// hold.
	return e.reserveRanges(j, e.now)
}

// holdNodes finds the earliest time from t0 (a profile step) at which j
// fits on concrete nodes — each node giving what is free over the whole
// walltime once its running jobs reach their walltime, less the holds on
// it — and holds those nodes for j, in preference order, for the rest of
// the pass. This is how Maui reserves nodes for a blocked job: later jobs
// may backfill onto other nodes even past the reservation's start.
func (e *Engine) holdNodes(j *job, t0 int64) int64 {
	p := &e.prof
	for k := p.search(t0); k < len(p.steps); k++ {
		t := p.steps[k].t
		if ok, _ := p.fitsFrom(k, j.Procs, j.Walltime); !ok {
			continue
		}
		if e.holdAt(j, t) {
			return t
		}
	}
	return never
}

func (e *Engine) holdAt(j *job, t int64) bool {
	end := sat(t, j.Walltime)
	if cap(e.freeBuf) < len(e.nodes) {
		e.freeBuf = make([]int, len(e.nodes))
	}
	free := e.freeBuf[:len(e.nodes)]
	copy(free, e.idle)
	if t > e.now {
		// running jobs that are gone by t (by their walltime)
		for _, r := range e.running {
			if r.wallEnd > t {
				break
			}
			if r.end <= t {
				for _, h := range r.hosts {
					free[h.node] += h.procs
				}
			}
		}
	}
	for _, rv := range e.resvs {
		if rv.r.Start < end && rv.r.End > t && !e.admits(rv) {
			for _, h := range rv.hosts {
				free[h.node] -= h.procs
			}
		}
	}
	for _, b := range e.blocked {
		if b.s < end && b.e > t {
			for _, i := range b.touched {
				free[i] -= b.per[i]
			}
		}
	}
	e.maskJobFull(free, t, end) // NODECFG MAXJOB (nodelimits.go)
	if e.slots != nil && !e.slotsFit(j, free, t) {
		return false // job slots of idle nodes (nodelimits.go)
	}
	// take nodes in the reservation order, each with everything it has
	// free (unusable nodes are far below zero, see e.idle), the last one
	// for what is still missing
	b := e.newBlocked(t, end)
	order := e.resOrderFor(j, t, end)
	if e.chunksByMaui(j) {
		if e.distributeChunks(j, b, free, order) {
			return true
		}
		e.dropLastBlocked()
		return false
	}
	need := j.Procs
	for _, i := range order {
		f := free[i]
		if f > 0 && !j.can(i) {
			f = 0
		}
		if f > 0 {
			f = e.chunkCap(j, f)
		}
		if f <= 0 {
			continue
		}
		take := min(f, need)
		b.per[i] = take
		b.touched = append(b.touched, i)
		need -= take
		if need <= 0 {
			return true
		}
	}
	e.dropLastBlocked() // not enough on nodes
	return false
}

// buildProfile sets the profile to the free processors from now on:
// capacity less running jobs (held until their walltime) and grid
// reservations.
func (e *Engine) buildProfile() {
	p := &e.prof
	rd := e.resvDeltas()
	free, i := e.total-e.used, 0
	for ; i < len(rd) && rd[i].t <= e.now; i++ {
		free += rd[i].free
	}
	p.reset(e.now, free)
	push := func(t int64, d int) {
		last := &p.steps[len(p.steps)-1]
		if last.t == t {
			last.free += d
		} else {
			p.steps = append(p.steps, step{t: t, free: last.free + d})
		}
	}
	var late []*job
	r := 0
	for r < len(e.running) || i < len(rd) {
		if r < len(e.running) {
			j := e.running[r]
			if j.pool == 0 || j.wallEnd <= e.now {
				if j.pool > 0 {
					late = append(late, j)
				}
				r++
				continue
			}
			if i == len(rd) || j.wallEnd <= rd[i].t {
				push(j.wallEnd, j.pool)
				r++
				continue
			}
		}
		push(rd[i].t, rd[i].free)
		i++
	}
	for _, j := range late {
		// overdue by its walltime (a snapshot's job): held until it ends
		p.add(max(j.end, e.now+1), never, j.pool)
	}
	if e.srACL {
		e.unshareRunning()
	}
}

// resvDeltas is the grid reservations as changes of free processors by
// time, rebuilt when reservations change.
func (e *Engine) resvDeltas() []step {
	if !e.resvChanged {
		return e.rdeltas
	}
	e.rdeltas = e.rdeltas[:0]
	for _, r := range e.resvs {
		if r.pool > 0 {
			e.rdeltas = append(e.rdeltas, step{t: r.r.Start, free: -r.pool}, step{t: r.r.End, free: r.pool})
		}
	}
	slices.SortFunc(e.rdeltas, func(a, b step) int { return cmp.Compare(a.t, b.t) })
	e.resvChanged = false
	return e.rdeltas
}

// nodeAvail is when node i's backfill availability ends, or 0 when it has
// nothing free now. It follows how Maui 3.3.1 measures a node for a
// backfill window (MBFGetWindow → MJobGetNRange → MJobGetSNRange, one
// task, no duration), quirks included:
//
//   - The node's free count is followed through the times at which holds
//     start or end and running jobs reach their walltime, one instant at a
//     time. The first range starts now with the free count now recorded.
//   - At an instant where a hold starts, the range ends if nothing is free
//     any more, and a new range starts if the count fell below the one
//     recorded; a count that grew is not recorded.
//   - At an instant where things only end, a new range starts if the count
//     grew above the one recorded.
//   - The first range is joined with the second when the second's recorded
//     count is not smaller, and never with any later one.
func (e *Engine) nodeAvail(i int) int64 {
	if e.nlim != nil {
		return min(e.nodeAvailRes(i), e.jobFullFrom(i)) // NODECFG MAXJOB (nodelimits.go)
	}
	return e.nodeAvailRes(i)
}

// nodeAvailRes is nodeAvail by processors alone.
func (e *Engine) nodeAvailRes(i int) int64 {
	n := &e.nodes[i]
	if !n.usable || n.used >= n.procs {
		return 0
	}
	rec := n.procs - n.used - e.holdsAt(i, e.now)
	if rec <= 0 {
		return 0
	}
	first := rec
	if len(n.run) == 0 && len(n.holds) == 0 {
		// an idle node: only blocked jobs' reservations change it, and
		// the first to start cuts its count
		if t, ok := e.firstBlockedStart(i); ok {
			return t
		}
	}
	ts := e.tsBuf[:0]
	for _, r := range n.run {
		if t := max(r.j.wallEnd, r.j.end); t > e.now {
			ts = append(ts, t)
		}
	}
	for _, h := range n.holds {
		ts = appendAfter(ts, e.now, h.s, h.e)
	}
	for _, b := range e.blocked {
		if b.per[i] > 0 {
			ts = appendAfter(ts, e.now, b.s, b.e)
		}
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	e.tsBuf = ts
	ranges := 0 // ranges closed so far
	for _, t := range ts {
		c := n.procs - e.runningAt(i, t) - e.holdsAt(i, t)
		split := false
		if e.holdStartsAt(i, t) {
			if c <= 0 {
				return t // the range ends; nothing later joins it
			}
			split = c < rec
		} else {
			split = c > rec
		}
		if !split {
			continue
		}
		ranges++
		switch {
		case ranges == 1 && c < first:
			return t // the second range is smaller: not joined
		case ranges == 2:
			return t
		}
		rec = c
	}
	return never
}

// firstBlockedStart is the earliest start of a blocked job's reservation on
// node i (never if none); ok is false when one has started already (then
// the general case applies).
func (e *Engine) firstBlockedStart(i int) (t int64, ok bool) {
	t = never
	for _, b := range e.blocked {
		if b.per[i] > 0 {
			if b.s <= e.now {
				return 0, false
			}
			t = min(t, b.s)
		}
	}
	return t, true
}

// holdStartsAt reports whether a grid reservation or a blocked job's
// reservation starts on node i at t.
func (e *Engine) holdStartsAt(i int, t int64) bool {
	for _, h := range e.nodes[i].holds {
		if h.s == t || (t > h.s && t <= h.e && e.admits(h.r) && e.inclusiveCut(i, h, t)) {
			return true
		}
	}
	for _, b := range e.blocked {
		if b.per[i] > 0 && b.s == t {
			return true
		}
	}
	return false
}

func appendAfter(ts []int64, now int64, xs ...int64) []int64 {
	for _, x := range xs {
		if x > now {
			ts = append(ts, x)
		}
	}
	return ts
}

// dropStarted removes jobs started by backfill from the first w queue
// entries and returns the new length.
func (e *Engine) dropStarted(w int) int {
	return e.dropStartedFrom(0, w)
}

// dropStartedFrom is dropStarted when backfill looked at queue[from:w]
// only: nothing before from started.
func (e *Engine) dropStartedFrom(from, w int) int {
	if e.stale == 0 && e.parts == nil {
		// backfill started nothing (with partitions, each partition's
		// pass counts on its own queue and resets the count: walk)
		return w
	}
	if len(e.bfStarted) == e.stale && !e.noEarlyStop {
		// the started ones are where backfill found them: close the gaps
		slices.Sort(e.bfStarted)
		q, k := e.queue, from+e.bfStarted[0]
		for n, p := range e.bfStarted {
			end := w
			if n+1 < len(e.bfStarted) {
				end = from + e.bfStarted[n+1]
			}
			k += copy(q[k:], q[from+p+1:end])
		}
		e.stale = 0
		return k
	}
	k := from
	for _, j := range e.queue[from:w] {
		if !j.started {
			e.queue[k] = j
			k++
		}
	}
	e.stale = 0
	return k
}

// nodeFree is the fewest processors node i has free at any time in
// [now, end): capacity less the running jobs still held then (until their
// walltime) and less the holds then in force. This is how Maui checks a
// node's availability range for a job: a hold that starts later only
// counts against what the node will have free by then.
func (e *Engine) nodeFree(i int, end int64) int {
	n := &e.nodes[i]
	best := n.procs - n.used - e.holdsAt(i, e.now)
	for _, h := range n.holds {
		if h.s > e.now && h.s < end && !e.admits(h.r) {
			best = min(best, n.procs-e.runningAt(i, h.s)-e.holdsAt(i, h.s))
		}
	}
	for _, b := range e.blocked {
		if b.per[i] > 0 && b.s > e.now && b.s < end {
			best = min(best, n.procs-e.runningAt(i, b.s)-e.holdsAt(i, b.s))
		}
	}
	return best
}

// holdsAt is what grid reservations and this pass's blocked jobs hold on
// node i at time t.
func (e *Engine) holdsAt(i int, t int64) int {
	held := 0
	for _, h := range e.nodes[i].holds {
		if h.s <= t && h.e > t && !e.admits(h.r) {
			held += h.procs
		}
	}
	for _, b := range e.blocked {
		if b.per[i] > 0 && b.s <= t && b.e > t {
			held += b.per[i]
		}
	}
	return held
}

// runningAt is what running jobs still hold on node i at time t >= now:
// a job holds its processors until its walltime (or its real end, when a
// snapshot's job is overdue).
func (e *Engine) runningAt(i int, t int64) int {
	held := 0
	for _, r := range e.nodes[i].run {
		if r.j.wallEnd > t || r.j.end > t {
			held += r.procs
		}
	}
	return held
}

// setHeld marks j as holding a reservation this pass. clearHeld unmarks
// them all (but for kept reservations) before the next pass, so a pass
// reads held only of the jobs it reserved, without resetting every
// queued job.
func (e *Engine) setHeld(j *job) {
	j.held = true
	e.heldJobs = append(e.heldJobs, j)
}

func (e *Engine) clearHeld() {
	w := 0
	for _, j := range e.heldJobs {
		if j.kept && j.held {
			e.heldJobs[w] = j // as the first call leaves a kept job's mark
			w++
			continue
		}
		j.held = false
	}
	clear(e.heldJobs[w:])
	e.heldJobs = e.heldJobs[:w]
}

// backfillFrom is where in e.queue[:w] backfill may start looking, as the
// priority pass left it: jobs before bfFrom either started, hold a
// reservation, or did not fit now on the profile when the pass looked
// (laterFits) and so never will in this pass (reservations only take
// processors from it). A job left out cannot start, so it matters only
// as one of BACKFILLDEPTH's tries (then everything is looked at) and for
// the usage-limit rounds (whose passes keep bfFrom at 0).
func (e *Engine) backfillFrom(w int) int {
	if e.policy.BFDepth > 0 || e.noEarlyStop {
		return 0
	}
	return min(e.bfFrom, w)
}

package sim

import (
	"cmp"
	"slices"
	"sort"
)

// schedule is one scheduling pass at e.now (see the package comment).
func (e *Engine) schedule() {
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
	if e.used >= e.total && !e.keepPlan {
		return // nothing can start now, so no reservation matters yet
	}
	e.buildProfile()
	e.passes++
	p := &e.prof
	full := e.keepPlan && e.policy.unbounded()
	var minAfter []int
	if e.policy.unbounded() && !full {
		minAfter = e.suffixMinProcs()
	}
	reserved, w, stopped, idle := 0, 0, false, false
	for k, j := range e.queue {
		if stopped || idle {
			j.held = false
			e.queue[w] = j
			w++
			continue
		}
		if p.steps[0].free >= j.Procs {
			if ok, _ := p.fitsFrom(0, j.Procs, j.Walltime); ok {
				if hosts, ok := e.pickHosts(j, sat(e.now, j.Walltime)); ok {
					e.start(j, hosts)
					p.add(e.now, sat(e.now, j.Walltime), -j.Procs)
					continue
				}
			}
		}
		e.queue[w] = j
		w++
		j.held = false
		switch {
		case e.policy.Depth == 0:
			stopped = true
			continue
		case e.policy.unbounded() || reserved < e.policy.Depth:
			reserved++
			j.planned = e.reserveBlocked(j)
			j.held = true
		default:
			// Maui: the first blocked job past the reservation depth ends
			// the priority pass; the rest may only backfill.
			idle = true
			continue
		}
		if minAfter != nil {
			stopped = p.steps[0].free < minAfter[k+1]
		} else {
			stopped = !full && p.steps[0].free <= 0
		}
	}
	if idle {
		e.backfill(e.queue[:w])
		w = e.dropStarted(w)
	}
	clear(e.queue[w:])
	e.queue = e.queue[:w]
	e.dropBlockedHolds()
	if full {
		e.keep()
	}
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
	t := p.earliest(e.now, j.Procs, j.Walltime)
	if e.keepPlan || e.policy.unbounded() {
		// conservative: a plan on the processor profile (node-level holds
		// for every waiting job would cost too much)
		if t == e.now {
			t = p.earliest(p.nextAfter(e.now), j.Procs, j.Walltime)
		}
	} else if t != never {
		t = e.holdNodes(j, t)
	}
	if t != never {
		p.add(t, sat(t, j.Walltime), -j.Procs)
	}
	return t
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
	for i := range e.nodes {
		free[i] = e.nodes[i].procs - e.nodes[i].used
	}
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
		if rv.r.Start < end && rv.r.End > t {
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
	total := 0
	for i := range e.nodes {
		f := free[i]
		if !e.nodes[i].usable || f <= 0 {
			free[i] = 0
			continue
		}
		if j.PPN > 0 {
			f -= f % j.PPN
			free[i] = f
		}
		total += f
	}
	if total < j.Procs {
		return false
	}
	b := e.newBlocked(t, end)
	need := j.Procs
	for _, i := range e.order {
		if f := free[i]; f > 0 {
			b.per[i] = f
			b.touched = append(b.touched, i)
			need -= f
			if need <= 0 {
				break
			}
		}
	}
	return true
}

// blockedRes is a blocked job's reservation during one pass: per[i] are
// the processors it holds on node i over [s, e).
type blockedRes struct {
	s, e    int64
	per     []int
	touched []int
}

func (e *Engine) newBlocked(s, end int64) *blockedRes {
	k := len(e.blocked)
	if k == len(e.blockPool) {
		e.blockPool = append(e.blockPool, &blockedRes{per: make([]int, len(e.nodes))})
	}
	b := e.blockPool[k]
	e.blocked = append(e.blocked, b)
	b.s, b.e = s, end
	return b
}

// dropBlockedHolds forgets this pass's blocked-job reservations.
func (e *Engine) dropBlockedHolds() {
	for _, b := range e.blocked {
		for _, i := range b.touched {
			b.per[i] = 0
		}
		b.touched = b.touched[:0]
	}
	e.blocked = e.blocked[:0]
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

// pickHosts chooses nodes for j starting now: nodes in preference order, each
// giving what it has free now and keeps free of holds until end (the job's
// walltime end, or a backfill window's), first fit. With a ppn shape, whole
// chunks per node.
func (e *Engine) pickHosts(j *job, end int64) ([]hostUse, bool) {
	need := j.Procs
	var hosts []hostUse
	for _, i := range e.order {
		n := &e.nodes[i]
		if !n.usable || n.used >= n.procs {
			continue
		}
		avail := n.procs - n.used - e.reservedOn(i, e.now, end)
		if j.PPN > 0 {
			avail -= avail % j.PPN
		}
		if avail <= 0 {
			continue
		}
		take := min(avail, need)
		hosts = append(hosts, hostUse{node: i, procs: take})
		need -= take
		if need == 0 {
			return hosts, true
		}
	}
	return nil, false
}

// reservedOn is the processors of node n that grid reservations hold at
// some time in [s, t) (an upper bound: overlapping reservations are summed).
func (e *Engine) reservedOn(i int, s, t int64) int {
	held := 0
	for _, h := range e.nodes[i].holds {
		if h.s < t && h.e > s {
			held += h.procs
		}
	}
	for _, b := range e.blocked {
		if b.per[i] > 0 && b.s < t && b.e > s {
			held += b.per[i]
		}
	}
	return held
}

// backfill is Maui's FIRSTFIT backfill after the priority pass: windows of
// free processors are visited shortest first (a window ends where a hold —
// a blocked job's or a grid reservation — starts on nodes with free
// processors), and in each the waiting jobs without a reservation that fit
// its time and processors start in queue order on its nodes.
//
// A job that fits a window's time but does not start there cannot start in
// a longer one (fewer processors are free for longer, and starts only take
// more), so each job is tried once, in the first window long enough for it.
func (e *Engine) backfill(queue []*job) {
	p := &e.prof
	if p.steps[0].free <= 0 || e.used >= e.total {
		return
	}
	ws := e.windows()
	most := e.windowProcs(ws[0]) // the shortest window has the most
	if most <= 0 {
		return
	}
	for len(e.bfBuckets) < len(ws) {
		e.bfBuckets = append(e.bfBuckets, nil)
	}
	buckets := e.bfBuckets[:len(ws)]
	for k := range buckets {
		buckets[k] = buckets[k][:0]
	}
	for _, j := range queue {
		if j.started || j.held || j.Procs > most {
			continue
		}
		end := sat(e.now, j.Walltime)
		k := sort.Search(len(ws), func(i int) bool { return ws[i] >= end })
		buckets[k] = append(buckets[k], j)
	}
	for k, w := range ws {
		if len(buckets[k]) == 0 {
			continue
		}
		free := e.windowProcs(w)
		if free <= 0 {
			break
		}
		for _, j := range buckets[k] {
			if j.Procs > free || p.steps[0].free < j.Procs {
				continue
			}
			if ok, _ := p.fitsFrom(0, j.Procs, j.Walltime); !ok {
				continue // would delay a reservation held on the profile only
			}
			if hosts, ok := e.pickHosts(j, w); ok {
				e.start(j, hosts)
				e.stale++
				p.add(e.now, sat(e.now, j.Walltime), -j.Procs)
				free -= j.Procs
			}
		}
	}
}

// windows are the ends of the backfill windows, ascending, never last: the
// start times of holds on nodes that have free processors now.
func (e *Engine) windows() []int64 {
	ws := e.bfWindows[:0]
	for _, b := range e.blocked {
		if b.s > e.now && b.e > e.now && e.touchesFree(b) {
			ws = append(ws, b.s)
		}
	}
	for i := range e.nodes {
		n := &e.nodes[i]
		if !n.usable || n.used >= n.procs {
			continue
		}
		for _, h := range n.holds {
			if h.s > e.now && h.e > e.now {
				ws = append(ws, h.s)
			}
		}
	}
	slices.Sort(ws)
	ws = slices.Compact(ws)
	ws = append(ws, never)
	e.bfWindows = ws
	return ws
}

// touchesFree reports whether b holds processors on a node that has free
// processors now (only those bound a backfill window).
func (e *Engine) touchesFree(b *blockedRes) bool {
	for _, i := range b.touched {
		if n := &e.nodes[i]; n.usable && n.used < n.procs {
			return true
		}
	}
	return false
}

// windowProcs is the processors free from now until w.
func (e *Engine) windowProcs(w int64) int {
	sum := 0
	for i := range e.nodes {
		n := &e.nodes[i]
		if n.usable && n.used < n.procs {
			sum += max(n.procs-n.used-e.reservedOn(i, e.now, w), 0)
		}
	}
	return sum
}

// dropStarted removes jobs started by backfill from the first w queue
// entries and returns the new length.
func (e *Engine) dropStarted(w int) int {
	k := 0
	for _, j := range e.queue[:w] {
		if !j.started {
			e.queue[k] = j
			k++
		}
	}
	e.stale = 0
	return k
}

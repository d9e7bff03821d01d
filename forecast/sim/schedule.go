package sim

import (
	"cmp"
	"slices"
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
	e.buildProfile()
	e.passes++
	p := &e.prof
	full := e.keepPlan && e.policy.unbounded()
	var minAfter []int
	if e.policy.unbounded() && !full {
		minAfter = e.suffixMinProcs()
	}
	reserved, w, stopped := 0, 0, false
	for k, j := range e.queue {
		if stopped {
			e.queue[w] = j
			w++
			continue
		}
		if p.steps[0].free >= j.Procs {
			if ok, _ := p.fitsFrom(0, j.Procs, j.Walltime); ok {
				if hosts, ok := e.pickHosts(j); ok {
					e.start(j, hosts)
					p.add(e.now, sat(e.now, j.Walltime), -j.Procs)
					continue
				}
			}
		}
		e.queue[w] = j
		w++
		if e.policy.Depth == 0 {
			stopped = true
			continue
		}
		if e.policy.unbounded() || reserved < e.policy.Depth {
			reserved++
			j.planned = e.reserveBlocked(j)
		}
		if minAfter != nil {
			stopped = p.steps[0].free < minAfter[k+1]
		} else {
			stopped = !full && p.steps[0].free <= 0
		}
	}
	clear(e.queue[w:])
	e.queue = e.queue[:w]
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
		if hosts, ok := e.pickHosts(j); ok {
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
	if t == e.now {
		t = p.earliest(p.nextAfter(e.now), j.Procs, j.Walltime)
	}
	if t != never {
		p.add(t, sat(t, j.Walltime), -j.Procs)
	}
	return t
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

// pickHosts chooses nodes for j starting now: nodes in cluster order, each
// giving what it has free now and keeps free of grid reservations until the
// job's walltime ends (first fit). With a ppn shape, whole chunks per node.
func (e *Engine) pickHosts(j *job) ([]hostUse, bool) {
	end := sat(e.now, j.Walltime)
	need := j.Procs
	var hosts []hostUse
	for i := range e.nodes {
		n := &e.nodes[i]
		if !n.usable || n.used >= n.procs {
			continue
		}
		avail := n.procs - n.used - e.reservedOn(n, e.now, end)
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
func (e *Engine) reservedOn(n *node, s, t int64) int {
	held := 0
	for _, r := range n.resv {
		if r.r.Start < t && r.r.End > s {
			for _, h := range r.hosts {
				if e.nodes[h.node].name == n.name {
					held += h.procs
				}
			}
		}
	}
	return held
}

package sim

// schedule is one scheduling pass at e.now (see the package comment).
func (e *Engine) schedule() {
	if len(e.queue) == 0 {
		return
	}
	e.buildProfile()
	p := &e.prof
	reserved, w, stopped := 0, 0, false
	for _, j := range e.queue {
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
			e.reserveBlocked(j)
		}
		stopped = p.steps[0].free <= 0
	}
	clear(e.queue[w:])
	e.queue = e.queue[:w]
}

// reserveBlocked holds the earliest fit of a blocked job on the profile, so
// that later jobs plan around it. A job blocked only by node shape (the
// profile fits now) is held from the next profile step.
func (e *Engine) reserveBlocked(j *job) {
	p := &e.prof
	t := p.earliest(e.now, j.Procs, j.Walltime)
	if t == e.now {
		t = p.earliest(e.now+1, j.Procs, j.Walltime)
	}
	if t != never {
		p.add(t, sat(t, j.Walltime), -j.Procs)
	}
}

// buildProfile sets the profile to the free processors from now on:
// capacity less running jobs (held until their walltime) and grid
// reservations.
func (e *Engine) buildProfile() {
	p := &e.prof
	p.reset(e.now, e.total-e.used)
	for _, j := range e.running {
		if j.pool == 0 {
			continue
		}
		t := max(j.wallEnd, e.now)
		last := &p.steps[len(p.steps)-1]
		if t == e.now {
			// overdue by its walltime: held until it really ends
			t = max(j.end, e.now+1)
		}
		if last.t == t {
			last.free += j.pool
		} else if last.t < t {
			p.steps = append(p.steps, step{t: t, free: last.free + j.pool})
		} else {
			p.add(t, never, j.pool)
		}
	}
	for _, r := range e.resvs {
		if r.pool > 0 && r.r.End > e.now {
			p.add(max(r.r.Start, e.now), r.r.End, -r.pool)
		}
	}
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

package sim

// rangeWalk is the state of MJobGetSNRange's main loop over one node's
// events (buildRanges): the node's free count followed instant by instant
// and cut into ranges. Each phase of the loop is a method.
type rangeWalk struct {
	q   rangeQuery
	now int64
	// avl is what the node has free beyond the q.k tasks asked for
	// (negative: short of them).
	avl int
	// cur is the range being built; active says it is open.
	cur    rng
	active bool
	// pre: the walk has not yet passed the query's start.
	pre bool
	// added, removed: processors came back or were taken since the last
	// cut.
	added, removed bool
	out            []rng
	jc             int // job reservations in force (NODECFG MAXJOB, nodelimits.go)
}

// buildRanges walks the events (MJobGetSNRange's main loop) from the
// query's start: every instant's events are applied together, then the
// current range is opened, cut or closed.
func (e *Engine) buildRanges(ev []nevent, q rangeQuery, avl int, out []rng) []rng {
	w := rangeWalk{q: q, now: e.now, avl: avl, pre: true, added: true, removed: true, out: out}
	for x := range ev {
		v := &ev[x]
		if v.re <= q.s {
			continue
		}
		if w.pre && v.t > q.s && w.open(v.t) {
			break // passing the start (before this event's change)
		}
		if v.t > q.e && !w.active {
			break
		}
		w.apply(v)
		if x+1 < len(ev) && ev[x+1].t == v.t {
			continue // resources are checked once per instant
		}
		if w.pre && v.rs == q.s && w.open(v.t) {
			break // a reservation starting at the start
		}
		switch { // the end of an instant
		case w.removed && w.active:
			if w.shrink(v.t) {
				return w.out
			}
		case w.added && w.active:
			w.grow(v.t)
		case w.added && !w.active:
			w.resume(v.t)
		}
	}
	return w.finish()
}

// open is the walk reaching the query's start at t: the range opens there
// with the count then, unless the node is short (it stays closed, and the
// walk stops when t is past the window).
func (w *rangeWalk) open(t int64) (stop bool) {
	w.pre = false
	if w.avl < 0 || w.policyBlock() {
		w.active = false
		return t >= w.q.e
	}
	w.cur.tc, w.cur.s, w.active = w.q.k+w.avl, max(w.q.s, w.now), true
	return false
}

// apply takes one event's processors off the free count or gives them
// back.
func (w *rangeWalk) apply(v *nevent) {
	if v.incl {
		// a reservation the job may use (MResCheckJAccess): its end
		// still counts as resources taken (ResourcesRemoved)
		w.removed = w.removed || !v.start
		return
	}
	if v.job {
		w.countJob(v)
	}
	if v.start {
		w.removed = true
		w.avl -= v.amt
	} else {
		w.added = true
		w.avl += v.amt
	}
}

// shrink handles processors taken while a range is open: the range closes
// when the node runs short, else it is cut where the count changes in a
// way that matters (before the start, the range only begins lower).
func (w *rangeWalk) shrink(t int64) (done bool) {
	w.removed, w.added = false, false
	if w.avl < 0 || w.policyBlock() {
		return w.close(t)
	}
	tc := w.avl + w.q.k
	switch {
	case t >= w.q.s:
		if tc != w.cur.tc && (tc < w.cur.tc || w.matters(tc)) {
			if t > w.cur.s {
				w.emit(t)
			}
			w.cur = rng{s: max(t, w.now), tc: tc}
		}
	case tc < w.cur.tc:
		w.cur.tc = tc // before the start: the count the range begins with
	}
	return false
}

// close ends the open range at t as the node runs short: the range is
// kept if long enough or joined to the previous one. The walk is done
// once it holds q.count ranges or t reaches the window's end.
func (w *rangeWalk) close(t int64) (done bool) {
	if t-w.cur.s >= w.q.d || (len(w.out) > 0 && w.cur.s == w.out[len(w.out)-1].e) {
		w.emit(t)
	}
	w.active = false
	return len(w.out) == w.q.count || t >= w.q.e
}

// grow handles processors given back while a range is open: a rise
// always cuts the range, a fall only when it matters.
func (w *rangeWalk) grow(t int64) {
	tc := w.avl + w.q.k
	if tc > w.cur.tc || (tc < w.cur.tc && w.matters(tc)) {
		w.emit(t)
		w.cur = rng{s: max(t, w.now), tc: tc}
	}
}

// resume reopens a range at t when processors given back cover the tasks
// asked for again.
func (w *rangeWalk) resume(t int64) {
	w.added, w.removed = false, false
	if w.avl >= 0 && !w.policyBlock() {
		w.cur = rng{s: max(w.q.s, t, w.now), tc: w.q.k + w.avl}
		w.active = true
	}
}

// matters says a change of the count to tc is worth a new range for a
// job of q.t tasks: always when the job's size is not given, else when
// the count is below it on either side of the change.
func (w *rangeWalk) matters(tc int) bool {
	return w.q.t == 0 || tc < w.q.t || w.cur.tc < w.q.t
}

// emit ends the current range at t and keeps it.
func (w *rangeWalk) emit(t int64) {
	w.cur.e = t
	w.out = append(w.out, w.cur)
}

// finish keeps a range still open at the end of the events: it never
// ends.
func (w *rangeWalk) finish() []rng {
	if w.active {
		w.cur.e = rangeEnd
		w.out = append(w.out, w.cur)
	}
	return w.out
}

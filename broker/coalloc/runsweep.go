package coalloc

import (
	"math"
	"slices"
)

// Stage 1 over runs (runs.go): what the nodes can give over [t, t+dur) is
// the sum of the heights of the usable runs [a, b) with a <= t and
// t+dur <= b, so a run counts for the starts [a, b-dur]. The sweep walks
// the runs by start, adding the usable ones, and keeps those it added in
// a heap by end, removing each once t+dur passes its end: no per-node
// state, a few additions per run. Runs shorter than dur, on nodes slower
// than the tier or priced above the cut never count: the sweep reads only
// the index's lists that can hold others (runIndex), each with its own
// cursor, kept in a heap by its next start, and the next candidate is the
// earliest next start among them. Capacity can only grow at a run's
// start, so the candidate starts are the first instant and the starts of
// usable runs: the earliest feasible start is the same as the deque
// sweep's (sweep.go), which TestRunSweepMatchesDeque checks.

// runScratch is the run sweep's state, reused across sweeps.
type runScratch struct {
	// log is every run the current sweep added (a <= its start), for the
	// capacities at the start found and the bound sweep's record.
	log      []stretch
	at, dur  int64 // the last sweep's start and duration
	lists    []listCursor
	next     []int32  // the lists with a next start, a heap by it
	due      []int32  // the lists whose next start is the candidate
	ends     []runEnd // the runs added and not yet removed, a heap by end
	ncap     []int64
	capNodes []int32
}

// listCursor is a sweep's place in one list of the index: the next run
// (s) and the start of the next usable one, or a start before it
// (advanceStart; math.MaxInt64: none before the sweep's limit).
type listCursor struct {
	l     *runList
	k     int // the list's index
	s     cursor
	nextA int64
}

// runEnd is a run the sweep counts: its end, site and height.
type runEnd struct {
	b    int64
	site int32
	h    int32
}

// sweepRuns is sweep over the run index: the earliest feasible start not
// after sp.limit (see sweep).
func (p *Pool) sweepRuns(sp sweepSpec) (int64, bool) {
	p.ensureRuns()
	p.beginSweep(sp.tier)
	rs := &p.sc.runs
	rs.log, rs.ends = rs.log[:0], rs.ends[:0]
	if sp.track {
		p.sc.snap.ok = false
	}
	t := p.opts.NotBefore
	switch {
	case sp.from != nil:
		t = sp.from.at
		p.addFrom(sp.from.runs, addSat(t, sp.dur), &sp)
	case p.floor > t:
		t = p.floor
	}
	p.openLists(t, &sp, sp.from == nil && t > p.opts.NotBefore)
	rs.next = rs.next[:0]
	for i := range rs.lists {
		if rs.lists[i].nextA < math.MaxInt64 {
			rs.next = p.pushList(rs.next, int32(i))
		}
	}
	for added := true; ; added = p.advanceLists(t, &sp) {
		// Capacity grows only where a usable run starts: where none did,
		// the capacity is at most the previous candidate's.
		if added {
			p.dropEnds(addSat(t, sp.dur), sp.procs)
			if t <= sp.limit && p.feasible(sp) {
				rs.at, rs.dur = t, sp.dur
				if sp.track {
					p.recordRuns(t, sp.dur)
				}
				return t, true
			}
		}
		if t > sp.limit || len(rs.next) == 0 {
			return 0, false
		}
		t = rs.lists[rs.next[0]].nextA
	}
}

// advanceLists advances the lists whose next start is t (adding their
// usable runs that start there) and reports whether any run was added.
func (p *Pool) advanceLists(t int64, sp *sweepSpec) bool {
	rs := &p.sc.runs
	rs.due = rs.due[:0]
	for len(rs.next) > 0 && rs.lists[rs.next[0]].nextA <= t {
		rs.due = append(rs.due, rs.next[0])
		rs.next = p.popList(rs.next)
	}
	n := len(rs.log)
	for _, i := range rs.due {
		c := &rs.lists[i]
		stop := int64(math.MaxInt64)
		if len(rs.next) > 0 {
			stop = rs.lists[rs.next[0]].nextA
		}
		p.advanceStart(c, t, stop, sp)
		if c.nextA < math.MaxInt64 {
			rs.next = p.pushList(rs.next, i)
		}
	}
	return len(rs.log) > n
}

// pushList adds list i to the heap h by next start.
func (p *Pool) pushList(h []int32, i int32) []int32 {
	ls := p.sc.runs.lists
	h = append(h, i)
	for j := len(h) - 1; j > 0; {
		up := (j - 1) / 2
		if ls[h[up]].nextA <= ls[h[j]].nextA {
			break
		}
		h[up], h[j] = h[j], h[up]
		j = up
	}
	return h
}

// popList removes the heap's first list.
func (p *Pool) popList(h []int32) []int32 {
	ls := p.sc.runs.lists
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for j := 0; ; {
		l := 2*j + 1
		if l >= n {
			return h
		}
		m := l
		if r := l + 1; r < n && ls[h[r]].nextA < ls[h[l]].nextA {
			m = r
		}
		if ls[h[j]].nextA <= ls[h[m]].nextA {
			return h
		}
		h[j], h[m] = h[m], h[j]
		j = m
	}
}

// openLists places a cursor in every list whose runs may be usable: by
// start after t (the runs at or before t having been added from the
// bound sweep's record, or here when jump, or none when t is the first
// instant).
func (p *Pool) openLists(t int64, sp *sweepSpec, jump bool) {
	rs, x := &p.sc.runs, &p.runs
	rs.lists = rs.lists[:0]
	if sp.maxRank < 0 {
		return // no price at or below max_price
	}
	until, stop := addSat(t, sp.dur), int64(math.MaxInt64)
	last := x.group(sp.maxRank)
	for k := x.lengthClass(sp.dur); k < x.classes(); k++ {
		for v := range x.speeds {
			if x.top[v] < sp.tier {
				continue // no node in the group is fast enough
			}
			for g := 0; g <= last; g++ {
				idx := (k*x.speeds+v)*x.groups + g // see runIndex.slot
				stop = min(stop, p.openList(idx, t, until, stop, sp, jump))
			}
		}
	}
}

// openList places a cursor in the index's list idx unless it is empty
// (see openLists), and returns its next start (see advanceStart).
func (p *Pool) openList(idx int, t, until, stop int64, sp *sweepSpec, jump bool) int64 {
	rs, x := &p.sc.runs, &p.runs
	l := &x.lists[idx]
	if l.n == 0 {
		return math.MaxInt64
	}
	c := listCursor{l: l, k: idx}
	switch {
	case jump:
		c.s = p.addUntil(l, t, until, sp)
	case sp.from != nil && sp.from.runCur[idx].c >= 0:
		// The bound sweep's next run in this list: those before it
		// start by t or are of no use to the bound sweep, so to none.
		c.s = sp.from.runCur[idx]
	case sp.from != nil:
		c.s = l.search(t+1, math.MinInt32)
	}
	p.advanceStart(&c, t, stop, sp)
	rs.lists = append(rs.lists, c)
	return c.nextA
}

// addFrom adds the runs a bound sweep recorded that this sweep may use
// and that reach until.
func (p *Pool) addFrom(from []stretch, until int64, sp *sweepSpec) {
	ok := p.sc.classOK
	for i := range from {
		r := &from[i]
		if ok[r.class] && r.b >= until {
			p.addRun(r, sp.procs)
		}
	}
}

// addUntil adds the usable runs of l that start at or before t and end
// at or after until, and returns the position after t.
func (p *Pool) addUntil(l *runList, t, until int64, sp *sweepSpec) cursor {
	ok, dur := p.sc.classOK, sp.dur
	var c cursor
	chunks := l.chunks
	for ; c.c < len(chunks); c.c, c.i = c.c+1, 0 {
		ch := chunks[c.c]
		for ; c.i < len(ch); c.i++ {
			r := &ch[c.i]
			if r.a > t {
				return c
			}
			if r.b >= until && r.usable(sp.rankAt(r.site), ok, dur) {
				p.addRun(r, sp.procs)
			}
		}
	}
	return c
}

// advanceStart adds the usable runs of c's list that start at or before
// t (none of them ends before t+dur: it is at least dur long and starts
// at t, or t is the first instant), then finds the next usable one; or,
// past walkSlack runs it cannot use, it stops at the first run after
// stop (> t), a start before the next usable one: nextA is the run's
// start either way. stop is the earliest next start of the lists before
// it, so a sweep does not walk far past its next candidate through a list
// of runs it cannot use (in a fine index, a list can hold nothing the job
// can use: runs priced above its cut at the same length, say). A start
// where no usable run starts is a candidate that is never the answer: no
// capacity was added since the previous one.
func (p *Pool) advanceStart(c *listCursor, t, stop int64, sp *sweepSpec) {
	ok, dur := p.sc.classOK, sp.dur
	chunks := c.l.chunks
	cc, i := c.s.c, c.s.i
	skipped := 0
	for ; cc < len(chunks); cc, i = cc+1, 0 {
		ch := chunks[cc]
		for ; i < len(ch); i++ {
			r := &ch[i]
			if !r.usable(sp.rankAt(r.site), ok, dur) {
				if r.a > sp.limit {
					c.s, c.nextA = cursor{cc, i}, math.MaxInt64
					return
				}
				if skipped++; r.a > stop && skipped > walkSlack {
					c.s, c.nextA = cursor{cc, i}, r.a
					return
				}
				continue
			}
			if r.a > t {
				c.s, c.nextA = cursor{cc, i}, r.a
				if r.a > sp.limit {
					c.nextA = math.MaxInt64
				}
				return
			}
			p.addRun(r, sp.procs)
		}
	}
	c.s, c.nextA = cursor{cc, 0}, math.MaxInt64
}

// walkSlack is how many runs advanceStart walks past before it may stop
// short of a usable one: enough that lists of mixed runs are read in one
// go, few enough that a list of none costs little more than a candidate.
const walkSlack = 64

func (p *Pool) addRun(r *stretch, procs int64) {
	rs := &p.sc.runs
	rs.log = append(rs.log, *r)
	rs.ends = pushEnd(rs.ends, runEnd{b: r.b, site: r.site, h: r.h})
	p.sc.addCap(r.site, int64(r.h), procs)
}

// dropEnds removes the counted runs that end before until: they no
// longer hold a window starting at until-dur.
func (p *Pool) dropEnds(until, procs int64) {
	rs := &p.sc.runs
	for len(rs.ends) > 0 && rs.ends[0].b < until {
		e := rs.ends[0]
		n := len(rs.ends) - 1
		rs.ends[0] = rs.ends[n]
		rs.ends = rs.ends[:n]
		siftEnd(rs.ends, 0)
		p.sc.addCap(e.site, -int64(e.h), procs)
	}
}

// pushEnd adds e to the heap h.
func pushEnd(h []runEnd, e runEnd) []runEnd {
	h = append(h, e)
	for i := len(h) - 1; i > 0; {
		up := (i - 1) / 2
		if h[up].b <= h[i].b {
			break
		}
		h[up], h[i] = h[i], h[up]
		i = up
	}
	return h
}

func siftEnd(h []runEnd, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].b < h[l].b {
			m = r
		}
		if h[i].b <= h[m].b {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// addCap moves site s's capacity over the window by d.
func (sc *scratch) addCap(s int32, d, procs int64) {
	before := sc.siteCap[s]
	after := before + d
	sc.siteCap[s] = after
	sc.total += d
	if before < procs && after >= procs {
		sc.atLeast++
	} else if before >= procs && after < procs {
		sc.atLeast--
	}
}

// recordRuns keeps, for the job's other sweeps, the runs that hold a
// window of dur at t, and where the sweep stopped in each list.
func (p *Pool) recordRuns(t int64, dur int64) {
	sc := &p.sc
	until := addSat(t, dur)
	sc.snap.ok, sc.snap.at, sc.snap.runs = true, t, sc.snap.runs[:0]
	sc.snap.runCur = sc.snap.runCur[:0]
	for range p.runs.lists {
		sc.snap.runCur = append(sc.snap.runCur, cursor{c: -1})
	}
	for _, c := range sc.runs.lists {
		sc.snap.runCur[c.k] = c.s
	}
	for _, r := range sc.runs.log {
		if r.b >= until {
			sc.snap.runs = append(sc.snap.runs, r)
		}
	}
}

// capacitiesRuns lists what each node can give over the window the last
// successful run sweep stopped at, in node order.
func (p *Pool) capacitiesRuns() []nodeCap {
	rs := &p.sc.runs
	if len(rs.ncap) != len(p.nodes) {
		rs.ncap = make([]int64, len(p.nodes))
	}
	until := addSat(rs.at, rs.dur)
	rs.capNodes = rs.capNodes[:0]
	for _, r := range rs.log {
		if r.b < until {
			continue
		}
		if rs.ncap[r.node] == 0 {
			rs.capNodes = append(rs.capNodes, r.node)
		}
		rs.ncap[r.node] += int64(r.h)
	}
	slices.Sort(rs.capNodes)
	out := make([]nodeCap, 0, len(rs.capNodes))
	for _, n := range rs.capNodes {
		out = append(out, nodeCap{node: n, cap: rs.ncap[n]})
		rs.ncap[n] = 0
	}
	return out
}

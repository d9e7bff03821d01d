package coalloc

import (
	"math"
	"slices"
)

// Stage 1 over runs (runs.go): what the nodes can give over [t, t+dur) is
// the sum of the heights of the usable runs [a, b) with a <= t and
// t+dur <= b, so a stretch counts for the starts [a, b-dur]. The sweep walks
// the runs by start (adding) and by end (removing, dur later), with no
// per-node state: its work per stretch is a few additions. Runs shorter than
// dur never count and are skipped. Capacity can only grow at a stretch's
// start, so the candidate starts are the first instant and the starts of
// usable runs: the earliest feasible start is the same as the deque
// sweep's (sweep.go), which TestRunSweepMatchesDeque checks.

// runScratch is the stretch sweep's state, reused across sweeps.
type runScratch struct {
	// log is every stretch the current sweep added (a <= its start), for the
	// capacities at the start found and the bound sweep's record.
	log      []stretch
	at, dur  int64 // the last sweep's start and duration
	ncap     []int64
	capNodes []int32
}

// sweepRuns is sweep over the stretch index: the earliest feasible start not
// after sp.limit (see sweep).
func (p *Pool) sweepRuns(sp sweepSpec) (int64, bool) {
	p.ensureRuns()
	p.beginSweep(sp.tier)
	rs := &p.sc.runs
	rs.log = rs.log[:0]
	if sp.track {
		p.sc.snap.ok = false
	}
	t := p.opts.NotBefore
	var start cursor
	switch {
	case sp.from != nil:
		t, start = sp.from.at, sp.from.runCur
		p.addFrom(sp.from.runs, addSat(t, sp.dur), &sp)
	case p.floor > t:
		t = p.floor
		start = p.addStarts(cursor{}, t, addSat(t, sp.dur), &sp)
	}
	end := p.runs.byEnd.search(addSat(t, sp.dur), math.MinInt32)
	for {
		start = p.addStarts(start, t, math.MinInt64, &sp)
		end = p.dropEnds(end, addSat(t, sp.dur), &sp)
		if t > sp.limit {
			return 0, false
		}
		if p.feasible(sp) {
			rs.at, rs.dur = t, sp.dur
			if sp.track {
				p.recordRuns(t, start, sp.dur)
			}
			return t, true
		}
		next, ok := p.nextStart(&start, &sp)
		if !ok {
			return 0, false
		}
		t = next
	}
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

// addStarts adds every usable stretch that starts at or before t and ends at
// or after until (a stretch that ends before until was added and dropped by a
// sweep from the first instant), from cursor c on; it returns the first
// position after t.
func (p *Pool) addStarts(c cursor, t, until int64, sp *sweepSpec) cursor {
	chunks := p.runs.byStart.chunks
	ok, rank, dur := p.sc.classOK, sp.maxRank, sp.dur
	i := c.i
	for ; c.c < len(chunks); c.c, i = c.c+1, 0 {
		ch := chunks[c.c]
		for ; i < len(ch); i++ {
			r := &ch[i]
			if r.a > t {
				c.i = i
				return c
			}
			if r.usable(rank, ok, dur) && r.b >= until {
				p.addRun(r, sp.procs)
			}
		}
	}
	c.i = 0
	return c
}

func (p *Pool) addRun(r *stretch, procs int64) {
	p.sc.runs.log = append(p.sc.runs.log, *r)
	p.sc.addCap(r.site, int64(r.h), procs)
}

// dropEnds removes every usable stretch that ends before until: it no longer
// holds a window starting at until-dur.
func (p *Pool) dropEnds(c cursor, until int64, sp *sweepSpec) cursor {
	chunks := p.runs.byEnd.chunks
	ok, rank, dur := p.sc.classOK, sp.maxRank, sp.dur
	i := c.i
	for ; c.c < len(chunks); c.c, i = c.c+1, 0 {
		ch := chunks[c.c]
		for ; i < len(ch); i++ {
			r := &ch[i]
			if r.b >= until {
				c.i = i
				return c
			}
			if r.usable(rank, ok, dur) {
				p.sc.addCap(r.site, -int64(r.h), sp.procs)
			}
		}
	}
	c.i = 0
	return c
}

// nextStart is the start of the next usable stretch from c on (c moves past
// the runs that are not).
func (p *Pool) nextStart(c *cursor, sp *sweepSpec) (int64, bool) {
	chunks := p.runs.byStart.chunks
	ok, rank, dur := p.sc.classOK, sp.maxRank, sp.dur
	for ; c.c < len(chunks); c.c, c.i = c.c+1, 0 {
		ch := chunks[c.c]
		for ; c.i < len(ch); c.i++ {
			if r := &ch[c.i]; r.usable(rank, ok, dur) {
				return r.a, true
			}
		}
	}
	return 0, false
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
// window of dur at t and the position after t.
func (p *Pool) recordRuns(t int64, start cursor, dur int64) {
	sc := &p.sc
	until := addSat(t, dur)
	sc.snap.ok, sc.snap.at, sc.snap.runCur, sc.snap.runs = true, t, start, sc.snap.runs[:0]
	for _, r := range sc.runs.log {
		if r.b >= until {
			sc.snap.runs = append(sc.snap.runs, r)
		}
	}
}

// capacitiesRuns lists what each node can give over the window the last
// successful stretch sweep stopped at, in node order.
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

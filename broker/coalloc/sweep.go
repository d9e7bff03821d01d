package coalloc

import (
	"math"
	"slices"
)

// Stage 1: the earliest start t at which the usable processors over
// [t, t+dur) suffice. One pass over the time-sorted edges with two cursors:
// the right cursor applies every edge before t+dur, so each node's value
// (the sum of its usable pieces) is known up to the window's end; the left
// cursor retires what ends by t. Per node a monotone deque of (value,
// expiry) segments gives the minimum of the node's value over the window,
// which is what a job can hold there. Candidate starts are NotBefore and
// every usable edge after it: capacity can only grow where a segment leaves
// the window, that is at an edge.

type dqEntry struct {
	value  int64
	expiry int64 // the segment covers [.., expiry)
}

// nodeCap is what one node can give over a window.
type nodeCap struct {
	node int32
	cap  int64
}

// nstate is one node's sweep state, valid only when gen == scratch.curGen.
// The deque's last segment holds the node's value at the right cursor and
// its head the minimum over the window (what the node can give). It is 64
// bytes, one cache line: on large pools the sweep's cost is the misses on
// this array.
type nstate struct {
	dq   []dqEntry
	head int32
	gen  uint32
	// buf holds short deques in place (dq points into it), so the usual
	// node costs one cache miss, not two; longer ones spill to the heap.
	buf [2]dqEntry
}

// scratch is the per-pool sweep state, reused across sweeps. Node state is
// reset lazily (generation stamps), so a sweep costs what it visits.
type scratch struct {
	ns        []nstate
	classBase []bool // node class meets the job's speed, memory and features
	classOK   []bool // classBase and speed >= the sweep's tier
	curGen    uint32
	active    []int32 // nodes touched by the current sweep
	bounds    []bound // boundaries passed by the right edge, oldest first
	boundHead int
	siteCap   []int64
	topk      []int64
	total     int64
	atLeast   int // sites whose capacity alone reaches the job's procs
	// Values at the left edge, kept by a tracking sweep (the bound sweep)
	// so that the job's other sweeps can start where it stopped (and by
	// jump, which needs them once).
	leftVal   []int64
	leftNodes []int32
	snap      startState
	runs      runScratch // the run sweep's (runsweep.go)
}

// startState is where a sweep may begin instead of NotBefore: no sweep of
// the job can be feasible before at, cur is the first edge after at, and
// vals are the nonzero values at at of the nodes the bound sweep used
// (every node a sweep of the job may use, at the job's prices).
// The run sweep records instead the runs that hold the bound sweep's
// window at at (runs) and, per list of the run index, the position after
// at where it stopped (runCur; c < 0: a list it did not read).
type startState struct {
	ok     bool
	at     int64
	cur    cursor
	vals   []nodeCap
	runCur []cursor
	runs   []stretch
}

type sweepSpec struct {
	procs   int64
	dur     int64
	tier    float64 // only nodes at least this fast
	sites   int     // at most this many sites (>= len(p.sites) means any)
	maxRank int32   // only pieces priced at or below prices[maxRank]
	// siteRank, when set, is the cut per site instead (free-first's free
	// pass: each owner's free price); maxRank is then the highest of them.
	siteRank []int32
	limit    int64 // give up once the candidate start passes limit
	// from, when set, is where the sweep begins (see startState); track
	// asks the sweep to record such a state where it stops.
	from  *startState
	track bool
}

// rankAt is the price cut of the sweep at site s.
func (sp *sweepSpec) rankAt(s int32) int32 {
	if sp.siteRank != nil {
		return sp.siteRank[s]
	}
	return sp.maxRank
}

// edgeUsable: the edge is priced within the sweep's cut at its node's site
// and its node's class may be used.
func (p *Pool) edgeUsable(e *event, sp *sweepSpec) bool {
	if e.rank > sp.maxRank || !p.sc.classOK[e.class] {
		return false
	}
	return sp.siteRank == nil || e.rank <= sp.siteRank[p.nodeSite[e.node]]
}

func (p *Pool) ensureScratch() {
	sc := &p.sc
	if len(sc.ns) == len(p.nodes) && len(sc.classOK) == len(p.classes) {
		return
	}
	sc.ns = make([]nstate, len(p.nodes))
	sc.classBase = make([]bool, len(p.classes))
	sc.classOK = make([]bool, len(p.classes))
	sc.siteCap = make([]int64, len(p.sites))
	sc.leftVal = make([]int64, len(p.nodes))
}

// beginSweep starts a sweep over the nodes of the job's classes that are
// at least tier fast.
func (p *Pool) beginSweep(tier float64) {
	p.ensureScratch()
	sc := &p.sc
	for i, c := range p.classes {
		sc.classOK[i] = sc.classBase[i] && c.speed >= tier
	}
	sc.curGen++
	if sc.curGen == 0 { // wrapped: make every stamp stale
		for i := range sc.ns {
			sc.ns[i].gen = 0
		}
		sc.curGen = 1
	}
	sc.active = sc.active[:0]
	sc.bounds, sc.boundHead = sc.bounds[:0], 0
	clear(sc.siteCap)
	sc.total, sc.atLeast = 0, 0
}

// touch makes node n's state valid for this sweep: value 0, one segment.
func (p *Pool) touch(n int32) *nstate {
	sc := &p.sc
	st := &sc.ns[n]
	if st.gen == sc.curGen {
		return st
	}
	st.gen = sc.curGen
	st.head = 0
	if cap(st.dq) == 0 {
		st.dq = st.buf[:0:len(st.buf)]
	}
	st.dq = append(st.dq[:0], dqEntry{value: 0, expiry: math.MaxInt64})
	sc.active = append(sc.active, n)
	return st
}

// sweep returns the earliest feasible start not after sp.limit, using the
// nodes that meet the job's requirements and sp.tier. It begins at sp.from
// when set (the state a bound sweep recorded), else at NotBefore.
func (p *Pool) sweep(sp sweepSpec) (int64, bool) {
	p.ensureEvents()
	p.beginSweep(sp.tier)
	var right, left cursor
	t := p.opts.NotBefore
	if sp.track {
		p.sc.snap.ok = false
		defer p.resetLeft()
	}
	switch {
	case sp.from != nil:
		t, right = sp.from.at, sp.from.cur
		p.startFrom(sp.from, sp.procs)
	case p.floor > t:
		t, right = p.floor, p.jump(p.floor, &sp)
		left = right
	}
	for t <= sp.limit {
		p.advanceRight(&right, addSat(t, sp.dur), &sp)
		p.advanceLeft(t, sp.procs)
		if sp.track {
			p.trackLeft(&left, t, &sp)
		}
		if p.feasible(sp) {
			if sp.track {
				p.record(t, left)
			}
			return t, true
		}
		next, ok := p.nextCandidate(&right, sp)
		if !ok {
			return 0, false
		}
		t = next
	}
	return 0, false
}

// jump starts a sweep at at instead of NotBefore (the caller knows that
// no start before at is feasible): one pass sums every usable edge at or
// before at into the nodes' values, without the sweep's per-edge work, and
// the sweep goes on from the first edge after at. A tracking sweep keeps
// those values as its left edge's.
func (p *Pool) jump(at int64, sp *sweepSpec) cursor {
	var c cursor
	p.trackLeft(&c, at, sp)
	sc := &p.sc
	for _, n := range sc.leftNodes {
		if v := sc.leftVal[n]; v != 0 && sc.ns[n].gen != sc.curGen {
			st := p.touch(n)
			st.dq[0].value = v
			p.setMin(n, 0, v, sp.procs)
		}
	}
	if !sp.track {
		p.resetLeft()
	}
	return c
}

// startFrom gives every node the sweep may use its value at from.at, as
// one segment open to the right.
func (p *Pool) startFrom(from *startState, procs int64) {
	for _, v := range from.vals {
		if !p.sc.classOK[p.nodeClass[v.node]] {
			continue
		}
		st := p.touch(v.node)
		st.dq[0].value = v.cap
		p.setMin(v.node, 0, v.cap, procs)
	}
}

// trackLeft applies every usable edge at or before t to the nodes' values
// at the left edge. It trails the right edge, over edges just read.
func (p *Pool) trackLeft(c *cursor, t int64, sp *sweepSpec) {
	sc := &p.sc
	chunks := p.events.chunks
	for ; c.c < len(chunks); c.c, c.i = c.c+1, 0 {
		ch := chunks[c.c]
		for ; c.i < len(ch); c.i++ {
			e := &ch[c.i]
			if e.at > t {
				return
			}
			if !p.edgeUsable(e, sp) {
				continue
			}
			if sc.leftVal[e.node] == 0 {
				sc.leftNodes = append(sc.leftNodes, e.node)
			}
			sc.leftVal[e.node] += int64(e.procs)
		}
	}
}

// record keeps the values at t as the state the job's other sweeps start
// from.
func (p *Pool) record(t int64, left cursor) {
	sc := &p.sc
	sc.snap.ok, sc.snap.at, sc.snap.cur, sc.snap.vals = true, t, left, sc.snap.vals[:0]
	for _, n := range sc.leftNodes {
		if v := sc.leftVal[n]; v != 0 { // a node listed twice is zero the second time
			sc.snap.vals = append(sc.snap.vals, nodeCap{node: n, cap: v})
			sc.leftVal[n] = 0
		}
	}
}

func (p *Pool) resetLeft() {
	sc := &p.sc
	for _, n := range sc.leftNodes {
		sc.leftVal[n] = 0
	}
	sc.leftNodes = sc.leftNodes[:0]
}

func (p *Pool) usable(e event, sp *sweepSpec) bool {
	return p.edgeUsable(&e, sp)
}

// advanceRight applies every edge before end. Edges are in (time, node)
// order, so the edges of one node at one instant are adjacent: their sum
// is pushed as the node's new segment when the run ends. It walks the
// chunks in place: this loop is where a sweep spends its time.
func (p *Pool) advanceRight(c *cursor, end int64, sp *sweepSpec) {
	chunks := p.events.chunks
	pend, at, delta := int32(-1), int64(0), int64(0) // a run of usable edges
	i := c.i
	for ; c.c < len(chunks); c.c, i = c.c+1, 0 {
		ch := chunks[c.c]
		for ; i < len(ch); i++ {
			e := &ch[i]
			if pend >= 0 && (e.node != pend || e.at != at) {
				p.push(pend, at, delta, sp.procs)
				pend = -1
			}
			if e.at >= end {
				c.i = i
				return
			}
			if !p.edgeUsable(e, sp) {
				continue
			}
			if pend < 0 {
				pend, at, delta = e.node, e.at, 0
			}
			delta += int64(e.procs)
		}
	}
	if pend >= 0 {
		p.push(pend, at, delta, sp.procs)
	}
	c.i = 0
}

// push changes node n's value by delta at x: a new segment starts there,
// and the boundary x is queued for the left edge.
func (p *Pool) push(n int32, x, delta, procs int64) {
	sc := &p.sc
	st := p.touch(n)
	q, h := st.dq, int(st.head)
	if delta == 0 {
		return // the segment goes on (abutting pieces merge here)
	}
	v := q[len(q)-1].value + delta
	old := q[h].value
	q[len(q)-1].expiry = x
	for len(q) > h && q[len(q)-1].value >= v {
		q = q[:len(q)-1]
	}
	q = append(q, dqEntry{value: v, expiry: math.MaxInt64})
	st.dq = q
	sc.bounds = append(sc.bounds, bound{at: x, node: n})
	p.setMin(n, old, q[h].value, procs)
}

// bound is a segment boundary the right edge passed: at x, node's previous
// segment ends. The left edge retires segments at these, in time order.
type bound struct {
	at   int64
	node int32
}

// advanceLeft retires, at every boundary at or before t, the segments of
// its node that end by t.
func (p *Pool) advanceLeft(t int64, procs int64) {
	sc := &p.sc
	for ; sc.boundHead < len(sc.bounds) && sc.bounds[sc.boundHead].at <= t; sc.boundHead++ {
		n := sc.bounds[sc.boundHead].node
		st := &sc.ns[n]
		q, h := st.dq, int(st.head)
		old := q[h].value
		for q[h].expiry <= t {
			h++
		}
		if h > 0 && 2*h >= len(q) {
			q = q[:copy(q, q[h:])]
			st.dq = q
			h = 0
		}
		st.head = int32(h)
		p.setMin(n, old, q[h].value, procs)
	}
	if sc.boundHead > 4096 && 2*sc.boundHead >= len(sc.bounds) {
		sc.bounds = sc.bounds[:copy(sc.bounds, sc.bounds[sc.boundHead:])]
		sc.boundHead = 0
	}
}

// nextCandidate is the next instant after the current start where a
// node's usable processors change: the next queued boundary, or else the
// next usable edge the right edge has not reached. Capacity over the window
// can only grow where a segment leaves it, so no other start can be the
// first feasible one.
func (p *Pool) nextCandidate(c *cursor, sp sweepSpec) (int64, bool) {
	sc := &p.sc
	if sc.boundHead < len(sc.bounds) {
		return sc.bounds[sc.boundHead].at, true
	}
	for {
		e, ok := p.events.peek(c)
		if !ok {
			return 0, false
		}
		if p.usable(e, &sp) {
			return e.at, true
		}
		p.events.step(c)
	}
}

// setMin moves node n's capacity over the window from old to v.
func (p *Pool) setMin(n int32, old, v int64, procs int64) {
	sc := &p.sc
	if v == old {
		return
	}
	s := p.nodeSite[n]
	before := sc.siteCap[s]
	after := before + v - old
	sc.siteCap[s] = after
	sc.total += v - old
	if before < procs && after >= procs {
		sc.atLeast++
	} else if before >= procs && after < procs {
		sc.atLeast--
	}
}

func (p *Pool) feasible(sp sweepSpec) bool {
	sc := &p.sc
	switch {
	case sc.total < sp.procs:
		return false
	case sp.sites >= len(p.sites):
		return true
	case sp.sites == 1:
		return sc.atLeast > 0
	}
	// The sp.sites largest site capacities, kept in descending order by
	// insertion: O(sites × k) without sorting every site at every start.
	top := sc.topk[:0]
	for _, c := range sc.siteCap {
		if len(top) == sp.sites {
			if c <= top[len(top)-1] {
				continue
			}
			top = top[:len(top)-1]
		}
		i := len(top)
		top = append(top, c)
		for ; i > 0 && top[i-1] < c; i-- {
			top[i] = top[i-1]
		}
		top[i] = c
	}
	sc.topk = top
	var sum int64
	for _, c := range top {
		sum += c
	}
	return sum >= sp.procs
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// capacities lists the nodes with processors over the window the last
// successful sweep stopped at, in node order.
func (p *Pool) capacities() []nodeCap {
	var out []nodeCap
	for _, n := range p.sc.active {
		st := &p.sc.ns[n]
		if v := st.dq[st.head].value; v > 0 {
			out = append(out, nodeCap{node: n, cap: v})
		}
	}
	slices.SortFunc(out, func(a, b nodeCap) int { return cmpInt(int64(a.node), int64(b.node)) })
	return out
}

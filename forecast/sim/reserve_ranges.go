package sim

// maxRanges is Maui's MAX_MRANGE: range lists longer than this are cut.
const maxRanges = 256

// reserveRanges places blocked job j's reservation where Maui 3.3.1 does
// (MJobReserve → MJobGetEStartTime → MJobGetRange, MJobAllocMNL,
// MJobDistributeTasks) and holds it for the rest of the pass:
//
//   - every usable node's availability ranges from now give the times a
//     job of j's walltime may start there and with how many tasks (the
//     smallest count of the ranges that follow without a gap); summed over
//     nodes, the first time with enough tasks is the candidate;
//   - at a candidate time, the nodes that can start j then offer the count
//     they have at that time — not the smallest over the walltime, so a
//     node whose count dips later offers more than it keeps (Maui books
//     it anyway) — and are taken in the allocation order, the last one
//     only for what is still missing.
//
// It returns the reservation's start, or never.
func (e *Engine) reserveRanges(j *job, from int64) int64 {
	k := max(1, j.PPN)
	q := rangeQuery{s: from, e: rangeEnd, k: k, d: j.Walltime, t: j.Procs, count: maxRanges}
	merged := e.mergeBuf[:0]
	e.nodeEv.fill(e)
	for i := range e.nodes {
		if !e.nodes[i].usable || !j.can(i) {
			continue
		}
		ar, ok := e.snRange(i, e.nodeEv.of(i), q, e.arBuf[:0])
		e.arBuf = ar
		if !ok {
			continue
		}
		sr := startRanges(q.d, ar, e.srBuf[:0])
		e.srBuf = sr
		if len(sr) > 0 {
			merged = mergeRanges(merged, sr, &e.mergeTmp)
		}
	}
	e.mergeBuf = merged
	if len(merged) == 0 {
		return never
	}
	// Maui tries the unfiltered list when its first range is wide
	// enough, else the ranges with enough tasks (MJobSelectFRL).
	all := merged[0].tc >= j.Procs
	for _, c := range merged {
		if !all && c.tc < j.Procs {
			continue
		}
		if e.reserveAt(j, c.s) {
			return c.s
		}
	}
	return never
}

// reserveAt is the second look (MJobGetRange with a node list): the nodes
// able to start j at t, each with the tasks it has at t, allocated in the
// reservation order and trimmed to j's processors.
func (e *Engine) reserveAt(j *job, t int64) bool {
	k := max(1, j.PPN)
	q := rangeQuery{s: t, e: rangeEnd, k: k, d: j.Walltime, t: j.Procs, count: maxRanges}
	avail := e.availBuf
	total := 0
	for i := range e.nodes {
		avail[i] = 0
		if !e.nodes[i].usable || !j.can(i) {
			continue
		}
		ar, ok := e.snRange(i, e.nodeEv.of(i), q, e.arBuf[:0])
		e.arBuf = ar
		if !ok {
			continue
		}
		sr := startRanges(q.d, ar, e.srBuf[:0])
		e.srBuf = sr
		if len(sr) > 0 && sr[0].s <= t {
			avail[i] = ar[0].tc
			total += ar[0].tc
		}
	}
	if total < j.Procs {
		return false
	}
	b := e.newBlocked(t, sat(t, j.Walltime))
	order := e.resOrderFor(j, t, sat(t, j.Walltime))
	if e.chunksByMaui(j) {
		if e.distributeChunks(j, b, avail, order) {
			return true
		}
		e.dropLastBlocked()
		return false
	}
	need := j.Procs
	for _, i := range order {
		f := e.chunkCap(j, min(avail[i], j.Procs))
		if f <= 0 {
			continue
		}
		take := min(f, need)
		b.per[i] = take
		b.touched = append(b.touched, i)
		need -= take
		if need == 0 {
			return true
		}
	}
	e.dropLastBlocked()
	return false
}

// nodeEventCache holds every usable node's events (nodeEvents) for one
// reservation search: they do not change while reserveRanges tries its
// candidate times (reserveAt adds its reservation only after reading
// them), so each node's events are gathered and sorted once per search
// instead of once per candidate.
type nodeEventCache struct {
	ev  []nevent
	off []int // node i's events are ev[off[i]:off[i+1]]
}

func (c *nodeEventCache) fill(e *Engine) {
	c.ev, c.off = c.ev[:0], append(c.off[:0], 0)
	for i := range e.nodes {
		if e.nodes[i].usable {
			c.ev = append(c.ev, e.nodeEvents(i)...)
		}
		c.off = append(c.off, len(c.ev))
	}
}

func (c *nodeEventCache) of(i int) []nevent { return c.ev[c.off[i]:c.off[i+1]] }

// distributeChunks books a job asking for whole chunks of PPN tasks per
// node as Maui does under LASTAVAILABLE and FIRSTAVAILABLE (MJobAllocMNL
// takes nodes with at least one chunk free, in the reservation order,
// each with all the tasks it has at the reservation's start, until they
// make up the job's tasks; MINRESOURCE rounds each node down to whole
// chunks there already); then MJobDistributeTasks (TasksPerNode) keeps
// each node's count rounded down to whole chunks, the last ones only what
// is still missing (order: resOrderFor). The booking can fall short of the job's tasks (7 + 7
// + 4 + 8 + 6 + 8 + 8 tasks for a 44-task job of 4 per node book 40):
// Maui makes that reservation all the same. False when the nodes do not
// make up the job's tasks.
func (e *Engine) distributeChunks(j *job, b *blockedRes, avail, order []int) bool {
	got := 0
	var taken []int
	for _, i := range order {
		if avail[i] < j.PPN {
			continue
		}
		taken = append(taken, i)
		if got += avail[i]; got >= j.Procs {
			break
		}
	}
	if got < j.Procs {
		return false
	}
	need := j.Procs
	for _, i := range taken {
		tc := min(avail[i]-avail[i]%j.PPN, need)
		if tc <= 0 {
			continue
		}
		b.per[i] = tc
		b.touched = append(b.touched, i)
		need -= tc
	}
	return true
}

// chunksByMaui reports whether j's reservations are booked by
// distributeChunks: a job of whole chunks per node under LASTAVAILABLE or
// FIRSTAVAILABLE (MINRESOURCE and EXACTNODE book whole chunks for every
// task).
func (e *Engine) chunksByMaui(j *job) bool {
	return j.PPN > 0 && !e.policy.ExactNode && e.policy.NodeAlloc != MinResource
}

// booked is the processors the reservation holds.
func (b *blockedRes) booked() int {
	n := 0
	for _, i := range b.touched {
		n += b.per[i]
	}
	return n
}

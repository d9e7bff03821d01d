package sim

import "slices"

// This file reproduces how Maui 3.3.1 sees one node's future: its
// availability ranges (MJobGetSNRange), the start ranges derived from them
// (MRLSFromA) and the per-node probe a job starting now gets
// (MJobGetNRange). Behaviour only, written from reading Maui's source; the
// quirks are kept because they decide where Maui places reservations (see
// docs/simulator.md).

// rangeEnd stands for Maui's MAX_MTIME: a range that never ends.
const rangeEnd = never / 4

// nevent is a reservation boundary on one node: a running job (from its
// start to its walltime), a grid reservation or a blocked job's
// reservation. seq orders events of one instant the way Maui's event table
// does: in the order the reservations were made.
type nevent struct {
	t      int64
	start  bool
	job    bool  // a job's reservation (running or blocked), for NODECFG MAXJOB
	incl   bool  // a window admitting the job: takes nothing (standing_acl.go)
	rs, re int64 // the reservation's interval
	amt    int
	seq    int64
}

// rng is a time range [s, e) with tc tasks (processors) available.
type rng struct {
	s, e int64
	tc   int
}

// nodeEvents lists node i's reservation boundaries in Maui's order.
func (e *Engine) nodeEvents(i int) []nevent {
	n := &e.nodes[i]
	ev := e.evBuf[:0]
	add := func(s, end int64, amt int, seq int64, job bool) {
		if amt > 0 && end > s {
			ev = append(ev, nevent{t: s, start: true, job: job, rs: s, re: end, amt: amt, seq: seq},
				nevent{t: end, job: job, rs: s, re: end, amt: amt, seq: seq})
		}
	}
	for _, r := range n.run {
		add(r.j.start, max(r.j.wallEnd, r.j.end), r.procs, r.j.rseq, true)
	}
	for _, h := range n.holds {
		if !e.admits(h.r) {
			add(h.s, h.e, h.procs, h.r.seq, false)
		} else {
			ev = e.inclusiveEvents(ev, i, h)
		}
	}
	for _, b := range e.blocked {
		add(b.s, b.e, b.per[i], b.seq, true)
	}
	slices.SortFunc(ev, func(a, b nevent) int {
		switch {
		case a.t != b.t:
			return cmpInt64(a.t, b.t)
		case a.seq != b.seq:
			return cmpInt64(a.seq, b.seq)
		case a.start != b.start:
			if a.start {
				return -1
			}
			return 1
		}
		return 0
	})
	e.evBuf = ev
	return ev
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rangeQuery is what MJobGetSNRange is asked: ranges from s (to e, the end
// of the window of interest) with at least k tasks, for a job of walltime d
// and t tasks in all; at most count ranges are closed by resources running
// out.
type rangeQuery struct {
	s, e  int64
	k     int
	d     int64
	t     int
	count int
	mjc   int // the node's MAXJOB (0: none), nodelimits.go
}

// snRange is node i's availability ranges for q (MJobGetSNRange, for one
// processor per task and no policies), or false when it has none.
func (e *Engine) snRange(i int, ev []nevent, q rangeQuery, out []rng) ([]rng, bool) {
	n := &e.nodes[i]
	out = out[:0]
	x := 0
	for x < len(ev) && ev[x].re <= q.s {
		x++ // events of reservations over by the start are skipped
	}
	if x == len(ev) {
		tc := n.procs
		if q.s <= e.now {
			tc = n.procs - n.used
			if e.slots != nil && e.quietFrom(i, q.s) {
				tc = e.idleTasks(i, tc) // N->ARes's job slots (nodelimits.go)
			}
		}
		if tc < q.k {
			return out, false
		}
		return append(out, rng{s: max(q.s, e.now), e: rangeEnd, tc: tc}), true
	}
	avl := n.procs - q.k
	if avl < 0 {
		return out, false
	}
	if e.nlim != nil {
		q.mjc = e.nlim[i].MaxJob
	}
	out = e.buildRanges(ev[x:], q, avl, out)
	out = fixRanges(out, q)
	out = collapseRanges(out, q)
	return out, len(out) > 0 && out[0].tc > 0
}

// fixRanges is the first clean-up pass: ranges over before the start are
// emptied, ranges begun before it start there, and ranges with fewer than
// k tasks are dropped.
func fixRanges(ar []rng, q rangeQuery) []rng {
	w := 0
	for _, r := range ar {
		if r.e < q.s {
			r.tc = 0
		} else if r.s < q.s {
			r.s = q.s
		}
		if r.tc >= q.k {
			ar[w] = r
			w++
		}
	}
	return ar[:w]
}

// collapseRanges is the second pass, in place exactly as Maui does it: a
// range shorter than the walltime survives when the ranges joined to it
// (before, then after) make up the walltime — keeping its own count; a
// range starting after the window is folded into the previous one when
// they touch and it is not smaller (or the previous one is short), the
// count being the smaller of the two.
func collapseRanges(ar []rng, q rangeQuery) []rng {
	w := 0
	for x := range ar {
		rt := ar[x].e - ar[x].s
		if rt < q.d {
			for y := x - 1; y >= 0; y-- {
				if ar[y].e != ar[y+1].s {
					break
				}
				rt += ar[y].e - ar[y].s
				if rt >= q.d {
					break
				}
			}
			if rt < q.d {
				for y := x + 1; y < len(ar); y++ {
					if ar[y-1].e != ar[y].s {
						break
					}
					rt += ar[y].e - ar[y].s
					if rt >= q.d {
						break
					}
				}
			}
		}
		if ar[x].s > q.e {
			// ar[w] is this range when nothing was dropped before it,
			// otherwise a slot already used (as in Maui)
			if w > 0 && ar[w-1].e == ar[x].s && (ar[w].tc >= ar[w-1].tc || ar[w-1].e-ar[w-1].s < q.d) {
				ar[w-1].e = ar[x].e
				ar[w-1].tc = min(ar[w-1].tc, ar[x].tc)
			}
			ar[x].tc = 0
		} else if q.e > q.s && ar[x].e > q.e {
			ar[x].e = q.e
		}
		if rt < max(1, q.d) {
			ar[x].tc = 0
		}
		if ar[x].tc != 0 {
			ar[w] = ar[x]
			w++
		}
	}
	return ar[:w]
}

// startRanges turns availability ranges into the times a job of duration
// d may start (MRLSFromA): each range joined with the ranges that follow
// it without a gap, up to its end plus d — the one crossing that point
// included — with their smallest count.
func startRanges(d int64, ar []rng, out []rng) []rng {
	out = out[:0]
	for a := range ar {
		rt := ar[a].e - ar[a].s
		tc := ar[a].tc
		for r := a + 1; r < len(ar); r++ {
			if ar[r-1].e != ar[r].s {
				break
			}
			rt += ar[r].e - ar[r].s
			tc = min(tc, ar[r].tc)
			if rt > ar[a].e-ar[a].s+d {
				break
			}
		}
		if rt >= d {
			out = append(out, rng{s: ar[a].s, e: min(ar[a].e, ar[a].s+rt-d), tc: tc})
		}
	}
	if len(out) > 0 && out[0].tc == 0 {
		return out[:0]
	}
	return out
}

// nodeProbe is what MJobGetNRange finds for a job of procs tasks (ppn per
// chunk, 0 for any) and walltime d starting now on node i: the tasks it
// may have and how long that lasts.
func (e *Engine) nodeProbe(i int, ev []nevent, procs, ppn int, d int64) (tasks int, window int64, ok bool) {
	tasks, window, _, ok = e.nodeProbeK(i, ev, procs, ppn, d)
	return tasks, window, ok
}

// nodeProbeK is nodeProbe that also says the task count of the last range
// query that found a range (MJobGetNRange keeps that query's affinity).
func (e *Engine) nodeProbeK(i int, ev []nevent, procs, ppn int, d int64) (tasks int, window int64, lastK int, ok bool) {
	n := &e.nodes[i]
	tcNow := n.procs - n.used
	maxT := min(max(procs, ppn), tcNow)
	minT, minTPN, capT := 0, 0, 0
	if ppn > 0 {
		maxT -= maxT % ppn
		minTPN, capT = ppn, ppn-1
	}
	var buf [8]rng
	for maxT > max(minT, capT) {
		if maxT < minTPN {
			maxT = 0
			break
		}
		tc := (maxT + minT + 1) >> 1
		if ppn > 0 {
			if tp := ppn * (minT/ppn + 1); tp > tc {
				tc = tp
			} else {
				tc -= tc % ppn
			}
		}
		ar, ok := e.snRange(i, ev, rangeQuery{s: e.now, e: e.now, k: tc, d: d, t: procs, count: 1}, buf[:0])
		if !ok {
			maxT = tc - 1
			if ppn > 0 {
				maxT -= maxT % ppn
			}
			continue
		}
		minT, lastK = ar[0].tc, tc
		window = min(rangeEnd, ar[0].e) - ar[0].s
	}
	if ppn > 0 {
		minT -= minT % ppn
	}
	return minT, window, lastK, maxT > 0 && window > 0
}

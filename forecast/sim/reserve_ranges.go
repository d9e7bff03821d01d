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
func (e *Engine) reserveRanges(j *job) int64 {
	k := max(1, j.PPN)
	q := rangeQuery{s: e.now, e: rangeEnd, k: k, d: j.Walltime, t: j.Procs, count: maxRanges}
	merged := e.mergeBuf[:0]
	for i := range e.nodes {
		if !e.nodes[i].usable {
			continue
		}
		ar, ok := e.snRange(i, e.nodeEvents(i), q, e.arBuf[:0])
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
		if !e.nodes[i].usable {
			continue
		}
		ar, ok := e.snRange(i, e.nodeEvents(i), q, e.arBuf[:0])
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
	need := j.Procs
	for _, i := range e.resOrder {
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

// mergeRanges sums two range lists (MRLMerge): counts add up where ranges
// overlap; a range ends before another starts at the same instant; an
// instant range (start = end) counts together with everything in force
// then, ranges ending at that instant included. tmp is scratch space.
func mergeRanges(r1, r2 []rng, tmp *[]rng) []rng {
	const (
		sNone = iota
		sStart
		sEnd
		sInstant
	)
	c := (*tmp)[:0]
	slot := func(k int) *rng {
		for len(c) <= k {
			c = append(c, rng{})
		}
		return &c[k]
	}
	i1, i2, ci, tc := 0, 0, 0, 0
	st1, st2 := sStart, sStart
	const beyond = rangeEnd + 1
	for i1 < len(r1) || i2 < len(r2) {
		if ci >= maxRanges {
			break
		}
		t1, t2 := int64(beyond), int64(beyond)
		if i1 < len(r1) {
			t1 = r1[i1].s
			if st1 == sEnd {
				t1 = r1[i1].e
			}
		} else {
			st1 = sNone
		}
		if i2 < len(r2) {
			t2 = r2[i2].s
			if st2 == sEnd {
				t2 = r2[i2].e
			}
		} else {
			st2 = sNone
		}
		et := min(t1, t2)
		if i1 < len(r1) && r1[i1].e == et && r1[i1].s == et {
			st1 = sInstant
		}
		if i2 < len(r2) && r2[i2].e == et && r2[i2].s == et {
			st2 = sInstant
		}
		switch {
		case (st1 == sInstant && t1 == et) || (st2 == sInstant && t2 == et):
			if st1 == sInstant && t1 == et {
				if st2 == sEnd && t2 == et {
					slot(ci).e = et
					ci++
					old := tc
					tc -= r2[i2].tc
					i2++
					st2 = sStart
					slot(ci).s = et
					t2 = beyond
					if i2 < len(r2) {
						t2 = r2[i2].s
					}
					if t2 == et {
						slot(ci).tc = r1[i1].tc + r2[i2].tc
						if t2 == r2[i2].e {
							tc = 0
							i2++
							st2 = sStart
						}
					} else {
						slot(ci).tc = r1[i1].tc + old
					}
					slot(ci).e = et
				} else {
					slot(ci).s, slot(ci).e = et, et
					switch {
					case st2 == sInstant:
						slot(ci).tc = r1[i1].tc + r2[i2].tc
						tc = 0
						i2++
						st2 = sStart
					case st2 == sStart && t2 == et:
						slot(ci).tc = r1[i1].tc + r2[i2].tc
					default:
						slot(ci).tc = tc + r1[i1].tc
					}
				}
				i1++
				st1 = sStart
			} else {
				if st1 == sEnd && t1 == et {
					slot(ci).e = et
					ci++
					old := tc
					tc -= r1[i1].tc
					i1++
					st1 = sStart
					slot(ci).s = et
					t1 = beyond
					if i1 < len(r1) {
						t1 = r1[i1].s
					}
					if t1 == et {
						slot(ci).tc = r1[i1].tc + r2[i2].tc
						if t1 == r1[i1].e {
							i1++
							st1 = sStart
						}
					} else {
						slot(ci).tc = r2[i2].tc + old
					}
					slot(ci).e = et
				} else {
					if tc > 0 {
						slot(ci).e = et
						ci++
					}
					slot(ci).s = et
					if st1 == sStart && t1 == et {
						slot(ci).tc = r2[i2].tc + r1[i1].tc
					} else {
						slot(ci).tc = tc + r2[i2].tc
					}
					slot(ci).e = et
				}
				i2++
				st2 = sStart
			}
			ci++
			if tc > 0 {
				slot(ci).s, slot(ci).tc = et, tc
			}
		case (st1 == sEnd && t1 == et) || (st2 == sEnd && t2 == et):
			slot(ci).e = et
			ci++
			if st1 == sEnd && t1 == et {
				tc -= r1[i1].tc
				i1++
				st1 = sStart
			}
			if st2 == sEnd && t2 == et {
				tc -= r2[i2].tc
				i2++
				st2 = sStart
			}
			if tc > 0 {
				slot(ci).s, slot(ci).tc = et, tc
			}
		default: // a start
			if tc > 0 && et > slot(ci).s {
				slot(ci).e = et
				ci++
			}
			if st1 == sStart && t1 == et {
				tc += r1[i1].tc
				st1 = sEnd
			}
			if st2 == sStart && t2 == et {
				tc += r2[i2].tc
				st2 = sEnd
			}
			if tc > 0 {
				slot(ci).s, slot(ci).tc = et, tc
			}
		}
	}
	ci = min(ci, maxRanges-1, len(c))
	*tmp = c
	return append(r1[:0], c[:ci]...)
}

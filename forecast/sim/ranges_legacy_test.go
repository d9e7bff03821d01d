package sim

// legacyBuildRanges is buildRanges before it was split into phases (kept as
// the oracle and benchmark baseline of the split one); it walks the events (MJobGetSNRange's main loop): the node's
// free count is followed instant by instant and cut into ranges.
func (e *Engine) legacyBuildRanges(ev []nevent, q rangeQuery, avl int, out []rng) ([]rng, bool) {
	now, k := e.now, q.k
	var cur rng
	active, pre := false, true
	added, removed := true, true
	for x := range ev {
		v := ev[x]
		if v.re <= q.s {
			continue
		}
		if v.t > q.s && pre {
			pre = false
			if avl < 0 {
				active = false
				if v.t >= q.e {
					break
				}
			} else {
				cur.tc, cur.s, active = k+avl, max(q.s, now), true
			}
		}
		if v.t > q.e && !active {
			break
		}
		if v.start {
			removed = true
			avl -= v.amt
		} else {
			added = true
			avl += v.amt
		}
		if x+1 < len(ev) && ev[x+1].t == v.t {
			continue // resources are checked once per instant
		}
		if v.rs == q.s && pre {
			pre = false
			if avl < 0 {
				if v.t <= q.s {
					active = false
				}
				if v.t >= q.e {
					break
				}
			} else {
				active = true
				cur.tc, cur.s = k+avl, max(q.s, now)
			}
		}
		switch {
		case removed && active:
			removed, added = false, false
			if avl < 0 {
				// the range ends: kept if long enough or joined to the
				// previous one
				if v.t-cur.s >= q.d || (len(out) > 0 && cur.s == out[len(out)-1].e) {
					cur.e = v.t
					out = append(out, cur)
				}
				active = false
				if len(out) == q.count || v.t >= q.e {
					return out, true
				}
				continue
			}
			tc := avl + k
			if v.t >= q.s {
				if tc != cur.tc && (q.t == 0 || tc < q.t || tc < cur.tc || cur.tc < q.t) {
					if v.t > cur.s {
						cur.e = v.t
						out = append(out, cur)
					}
					cur = rng{s: max(v.t, now), tc: tc}
				}
			} else if tc < cur.tc {
				cur.tc = tc // before the start: the count the range begins with
			}
		case added && active:
			tc := avl + k
			if tc > cur.tc || (tc < cur.tc && (q.t == 0 || tc < q.t || cur.tc < q.t)) {
				cur.e = v.t
				out = append(out, cur)
				cur = rng{s: max(v.t, now), tc: tc}
			}
		case added && !active:
			added, removed = false, false
			if avl >= 0 {
				cur = rng{s: max(q.s, v.t, now), tc: k + avl}
				active = true
			}
		}
	}
	if active {
		cur.e = rangeEnd
		out = append(out, cur)
	}
	return out, true
}

// legacyMergeRanges is mergeRanges before it was split into phases (kept
// as the oracle and benchmark baseline of the split one); it sums two range lists (MRLMerge): counts add up where ranges
// overlap; a range ends before another starts at the same instant; an
// instant range (start = end) counts together with everything in force
// then, ranges ending at that instant included. tmp is scratch space.
func legacyMergeRanges(r1, r2 []rng, tmp *[]rng) []rng {
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

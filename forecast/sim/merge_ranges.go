package sim

// mergeRanges sums two range lists (MRLMerge): counts add up where ranges
// overlap; a range ends before another starts at the same instant; an
// instant range (start = end) counts together with everything in force
// then, ranges ending at that instant included. tmp is scratch space.
//
// The two lists are walked by one cursor each, event time by event time;
// each kind of event — an instant range, ends, starts — is a phase of
// rangeMerge. The result has at most maxRanges-1 ranges.
func mergeRanges(r1, r2 []rng, tmp *[]rng) []rng {
	m := rangeMerge{c: (*tmp)[:0], a: mergeCursor{r: r1, st: atStart}, b: mergeCursor{r: r2, st: atStart}}
	a, b := &m.a, &m.b
	for (a.i < len(r1) || b.i < len(r2)) && m.ci < maxRanges {
		a.locate()
		b.locate()
		et := min(a.t, b.t)
		a.markInstant(et)
		b.markInstant(et)
		switch {
		case a.is(atInstant, et):
			m.instantFirst(et)
		case b.is(atInstant, et):
			m.instantSecond(et)
		case a.is(atEnd, et) || b.is(atEnd, et):
			m.ends(et)
		default:
			m.starts(et)
		}
	}
	ci := min(m.ci, maxRanges-1, len(m.c))
	*tmp = m.c
	return append(r1[:0], m.c[:ci]...)
}

// Where a merge cursor stands on its current range.
const (
	atNone    = iota // past its list
	atStart          // before the range's start
	atEnd            // inside the range, before its end
	atInstant        // on an instant range (start = end)
)

// beyond is later than any range's end: an exhausted list's event time.
const beyond = rangeEnd + 1

// mergeCursor walks one of the lists being merged.
type mergeCursor struct {
	r  []rng
	i  int   // current range
	st int   // at* state on it
	t  int64 // the time of its next event
}

// locate sets the cursor's next event time: its range's start or end.
func (c *mergeCursor) locate() {
	if c.i >= len(c.r) {
		c.st, c.t = atNone, beyond
		return
	}
	c.t = c.r[c.i].s
	if c.st == atEnd {
		c.t = c.r[c.i].e
	}
}

// markInstant notes that the current range is an instant range at et.
func (c *mergeCursor) markInstant(et int64) {
	if c.i < len(c.r) && c.r[c.i].e == et && c.r[c.i].s == et {
		c.st = atInstant
	}
}

// is says the cursor is in state st with its event at et.
func (c *mergeCursor) is(st int, et int64) bool { return c.st == st && c.t == et }

// tc is the current range's count.
func (c *mergeCursor) tc() int { return c.r[c.i].tc }

// pass moves on to the next range.
func (c *mergeCursor) pass() {
	c.i++
	c.st = atStart
}

// nextStart is the current range's start, or beyond.
func (c *mergeCursor) nextStart() int64 {
	if c.i < len(c.r) {
		return c.r[c.i].s
	}
	return beyond
}

// rangeMerge is the merged list being written — c[ci] is the range open
// (or about to be), tc the count in force — and the cursors on the first
// (a) and second (b) lists.
type rangeMerge struct {
	c    []rng
	ci   int
	tc   int
	a, b mergeCursor
}

// slot is result range k, the list grown to hold it.
func (m *rangeMerge) slot(k int) *rng {
	for len(m.c) <= k {
		m.c = append(m.c, rng{})
	}
	return &m.c[k]
}

// closeAt ends the open range at et and moves to the next slot.
func (m *rangeMerge) closeAt(et int64) {
	m.slot(m.ci).e = et
	m.ci++
}

// resume opens the current slot at et with the count in force, if any.
func (m *rangeMerge) resume(et int64) {
	if m.tc > 0 {
		s := m.slot(m.ci)
		s.s, s.tc = et, m.tc
	}
}

// instantFirst is an instant range of the first list at et: a slot of its
// own counting it with what the second list has in force (an instant
// range of the second list at et is consumed with it, resetting the count
// in force), then the count in force resumes.
func (m *rangeMerge) instantFirst(et int64) {
	a, b := &m.a, &m.b
	if b.is(atEnd, et) {
		m.instantMeetsEnd(a, b, et, true)
	} else {
		s := m.slot(m.ci)
		s.s, s.e = et, et
		switch {
		case b.st == atInstant:
			s.tc = a.tc() + b.tc()
			m.tc = 0
			b.pass()
		case b.is(atStart, et):
			s.tc = a.tc() + b.tc()
		default:
			s.tc = m.tc + a.tc()
		}
	}
	a.pass()
	m.ci++
	m.resume(et)
}

// instantSecond is an instant range of the second list at et (the first
// list having none there). Unlike instantFirst (as in Maui) the open
// range is closed first, and an instant range following an end keeps the
// count in force.
func (m *rangeMerge) instantSecond(et int64) {
	a, b := &m.a, &m.b
	if a.is(atEnd, et) {
		m.instantMeetsEnd(b, a, et, false)
	} else {
		if m.tc > 0 {
			m.closeAt(et)
		}
		s := m.slot(m.ci)
		s.s = et
		if a.is(atStart, et) {
			s.tc = b.tc() + a.tc()
		} else {
			s.tc = m.tc + b.tc()
		}
		s.e = et
	}
	b.pass()
	m.ci++
	m.resume(et)
}

// instantMeetsEnd is an instant range (cursor in) at et where the other
// list's range (cursor end) ends: the open range closes, the ending range
// leaves the count, and the instant slot counts the instant range with
// the other list's next range when that starts at et (consumed if it is
// an instant range too; resetTC then zeroes the count in force) or with
// the count before the end.
func (m *rangeMerge) instantMeetsEnd(in, end *mergeCursor, et int64, resetTC bool) {
	m.closeAt(et)
	old := m.tc
	m.tc -= end.tc()
	end.pass()
	m.slot(m.ci).s = et
	if t := end.nextStart(); t == et {
		m.slot(m.ci).tc = in.tc() + end.tc()
		if t == end.r[end.i].e {
			if resetTC {
				m.tc = 0
			}
			end.pass()
		}
	} else {
		m.slot(m.ci).tc = in.tc() + old
	}
	m.slot(m.ci).e = et
}

// ends is ranges ending at et: the open range closes, their counts leave,
// and the rest goes on.
func (m *rangeMerge) ends(et int64) {
	a, b := &m.a, &m.b
	m.closeAt(et)
	if a.is(atEnd, et) {
		m.tc -= a.tc()
		a.pass()
	}
	if b.is(atEnd, et) {
		m.tc -= b.tc()
		b.pass()
	}
	m.resume(et)
}

// starts is ranges starting at et: the open range (if it has a length)
// closes, their counts join, and a range with the new count opens.
func (m *rangeMerge) starts(et int64) {
	a, b := &m.a, &m.b
	if m.tc > 0 && et > m.slot(m.ci).s {
		m.closeAt(et)
	}
	if a.is(atStart, et) {
		m.tc += a.tc()
		a.st = atEnd
	}
	if b.is(atStart, et) {
		m.tc += b.tc()
		b.st = atEnd
	}
	m.resume(et)
}

package sim

import (
	"slices"
	"testing"
)

// The phases of mergeRanges, one table: each row sets both cursors and
// the merged list on one event time, runs one phase and checks what it
// wrote. open is a range still open in the merged list (its end not yet
// written).
func TestMergeRangesPhases(t *testing.T) {
	const open = 0
	type phase func(m *rangeMerge, et int64)
	for _, c := range []struct {
		name           string
		r1, r2         []rng
		st1, st2       int
		c              []rng // the merged list so far; its last range is the current one
		tc             int
		run            phase
		want           []rng
		wantCI, wantTC int
		i1, i2         int
	}{
		{"starts: two ranges starting together add up",
			[]rng{{0, 100, 3}}, []rng{{0, 50, 2}}, atStart, atStart, nil, 0, (*rangeMerge).starts,
			[]rng{{0, open, 5}}, 0, 5, 0, 0},
		{"starts: a start cuts the open range",
			[]rng{{0, 100, 3}}, []rng{{50, 80, 2}}, atEnd, atStart, []rng{{0, open, 3}}, 3, (*rangeMerge).starts,
			[]rng{{0, 50, 3}, {50, open, 5}}, 1, 5, 0, 0},
		{"ends: an end cuts the open range",
			[]rng{{0, 100, 3}}, []rng{{0, 200, 2}}, atEnd, atEnd, []rng{{0, open, 5}}, 5, (*rangeMerge).ends,
			[]rng{{0, 100, 5}, {100, open, 2}}, 1, 2, 1, 0},
		{"ends: both ending leave nothing open",
			[]rng{{0, 100, 3}}, []rng{{0, 100, 2}}, atEnd, atEnd, []rng{{0, open, 5}}, 5, (*rangeMerge).ends,
			[]rng{{0, 100, 5}}, 1, 0, 1, 1},
		{"instantFirst: counted with the range in force, written over the open slot",
			[]rng{{50, 50, 4}}, []rng{{0, 100, 2}}, atStart, atEnd, []rng{{0, open, 2}}, 2, (*rangeMerge).instantFirst,
			[]rng{{50, 50, 6}, {50, open, 2}}, 1, 2, 1, 0},
		{"instantFirst: two instant ranges together",
			[]rng{{50, 50, 4}}, []rng{{50, 50, 1}}, atStart, atStart, nil, 0, (*rangeMerge).instantFirst,
			[]rng{{50, 50, 5}}, 1, 0, 1, 1},
		{"instantFirst: with a range starting then",
			[]rng{{50, 50, 4}}, []rng{{50, 90, 1}}, atStart, atStart, nil, 0, (*rangeMerge).instantFirst,
			[]rng{{50, 50, 5}}, 1, 0, 1, 0},
		{"instantSecond: the open range is closed first",
			[]rng{{0, 100, 2}}, []rng{{50, 50, 4}}, atEnd, atStart, []rng{{0, open, 2}}, 2, (*rangeMerge).instantSecond,
			[]rng{{0, 50, 2}, {50, 50, 6}, {50, open, 2}}, 2, 2, 0, 1},
		{"instantSecond: with a range starting then",
			[]rng{{50, 90, 1}}, []rng{{50, 50, 4}}, atStart, atStart, nil, 0, (*rangeMerge).instantSecond,
			[]rng{{50, 50, 5}}, 1, 0, 0, 1},
		{"instantMeetsEnd: counted with the ending range",
			[]rng{{100, 100, 4}}, []rng{{0, 100, 2}}, atStart, atEnd, []rng{{0, open, 2}}, 2, (*rangeMerge).instantFirst,
			[]rng{{0, 100, 2}, {100, 100, 6}}, 2, 0, 1, 1},
		{"instantMeetsEnd: counted with the range starting next",
			[]rng{{100, 100, 4}}, []rng{{0, 100, 2}, {100, 200, 3}}, atStart, atEnd, []rng{{0, open, 2}}, 2, (*rangeMerge).instantFirst,
			[]rng{{0, 100, 2}, {100, 100, 7}}, 2, 0, 1, 1},
		{"instantMeetsEnd: an instant range next is consumed",
			[]rng{{100, 100, 4}}, []rng{{0, 100, 2}, {100, 100, 3}}, atStart, atEnd, []rng{{0, open, 2}}, 2, (*rangeMerge).instantFirst,
			[]rng{{0, 100, 2}, {100, 100, 7}}, 2, 0, 1, 2},
		{"instantMeetsEnd: from the second list",
			[]rng{{0, 100, 2}}, []rng{{100, 100, 4}}, atEnd, atStart, []rng{{0, open, 2}}, 2, (*rangeMerge).instantSecond,
			[]rng{{0, 100, 2}, {100, 100, 6}}, 2, 0, 1, 1},
	} {
		m := rangeMerge{c: slices.Clone(c.c), ci: max(0, len(c.c)-1), tc: c.tc,
			a: mergeCursor{r: c.r1, st: c.st1}, b: mergeCursor{r: c.r2, st: c.st2}}
		a, b := &m.a, &m.b
		a.locate()
		b.locate()
		et := min(a.t, b.t)
		a.markInstant(et)
		b.markInstant(et)
		c.run(&m, et)
		if !slices.Equal(m.c, c.want) || m.ci != c.wantCI || m.tc != c.wantTC || a.i != c.i1 || b.i != c.i2 {
			t.Errorf("%s: merged %v ci %d tc %d cursors %d %d, want %v %d %d %d %d",
				c.name, m.c, m.ci, m.tc, a.i, b.i, c.want, c.wantCI, c.wantTC, c.i1, c.i2)
		}
	}
}

// TestMergeRangesExamples merges whole lists.
func TestMergeRangesExamples(t *testing.T) {
	for _, c := range []struct {
		name   string
		r1, r2 []rng
		want   []rng
	}{
		{"disjoint lists interleave", []rng{{0, 10, 1}}, []rng{{20, 30, 2}}, []rng{{0, 10, 1}, {20, 30, 2}}},
		{"overlaps add up", []rng{{0, 20, 1}}, []rng{{10, 30, 2}}, []rng{{0, 10, 1}, {10, 20, 3}, {20, 30, 2}}},
		{"a range ends before another starts at the same instant", []rng{{0, 10, 1}}, []rng{{10, 20, 2}}, []rng{{0, 10, 1}, {10, 20, 2}}},
		{"an instant range counts with the ranges ending then", []rng{{0, 10, 1}}, []rng{{10, 10, 2}}, []rng{{0, 10, 1}, {10, 10, 3}}},
		{"an empty list", nil, []rng{{0, 10, 1}}, []rng{{0, 10, 1}}},
	} {
		var tmp []rng
		if got := mergeRanges(slices.Clone(c.r1), c.r2, &tmp); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}

package sim

import (
	"slices"
	"testing"
)

// The phases of buildRanges, one table each. A walk asks for k=1 task
// from s=100 (now=50) for a job of t=4 tasks and d=50 s unless a row says
// otherwise.

func walkAt(avl int, cur rng, active bool, out ...rng) rangeWalk {
	return rangeWalk{q: rangeQuery{s: 100, e: rangeEnd, k: 1, d: 50, t: 4, count: maxRanges},
		now: 50, avl: avl, cur: cur, active: active, added: true, removed: true, out: out}
}

func checkWalk(t *testing.T, name string, w rangeWalk, cur rng, active bool, out []rng) {
	t.Helper()
	if w.cur != cur || w.active != active || !slices.Equal(w.out, out) {
		t.Errorf("%s: cur %+v active %v out %v, want %+v %v %v", name, w.cur, w.active, w.out, cur, active, out)
	}
}

func TestRangeWalkOpen(t *testing.T) {
	for _, c := range []struct {
		name   string
		avl    int
		now    int64
		qe, at int64
		cur    rng
		active bool
		stop   bool
	}{
		{"opens at the start with the count then", 2, 50, rangeEnd, 200, rng{s: 100, tc: 3}, true, false},
		{"opens at now when the start is past", 2, 150, rangeEnd, 200, rng{s: 150, tc: 3}, true, false},
		{"a short node stays closed", -1, 50, rangeEnd, 200, rng{}, false, false},
		{"a short node past the window stops the walk", -1, 50, 200, 200, rng{}, false, true},
	} {
		w := walkAt(c.avl, rng{}, false)
		w.pre, w.now, w.q.e = true, c.now, c.qe
		stop := w.open(c.at)
		checkWalk(t, c.name, w, c.cur, c.active, nil)
		if stop != c.stop || w.pre {
			t.Errorf("%s: stop %v pre %v, want %v false", c.name, stop, w.pre, c.stop)
		}
	}
}

func TestRangeWalkApply(t *testing.T) {
	w := walkAt(3, rng{}, false)
	w.added, w.removed = false, false
	w.apply(&nevent{start: true, amt: 2})
	if w.avl != 1 || !w.removed || w.added {
		t.Errorf("a reservation starting: avl %d removed %v added %v, want 1 true false", w.avl, w.removed, w.added)
	}
	w.apply(&nevent{amt: 3})
	if w.avl != 4 || !w.added {
		t.Errorf("a reservation ending: avl %d added %v, want 4 true", w.avl, w.added)
	}
}

func TestRangeWalkShrink(t *testing.T) {
	prev := rng{s: 20, e: 180, tc: 2}
	for _, c := range []struct {
		name   string
		w      rangeWalk
		at     int64
		cur    rng
		active bool
		out    []rng
		done   bool
	}{
		{"running short closes a long enough range", walkAt(-1, rng{s: 100, tc: 3}, true), 200,
			rng{s: 100, e: 200, tc: 3}, false, []rng{{100, 200, 3}}, false},
		{"a range shorter than the walltime is dropped", walkAt(-1, rng{s: 180, tc: 3}, true), 200,
			rng{s: 180, tc: 3}, false, nil, false},
		{"a short range joined to the previous one is kept", walkAt(-1, rng{s: 180, tc: 3}, true, prev), 200,
			rng{s: 180, e: 200, tc: 3}, false, []rng{prev, {180, 200, 3}}, false},
		{"the walk is done at q.count ranges", func() rangeWalk { w := walkAt(-1, rng{s: 100, tc: 3}, true); w.q.count = 1; return w }(), 200,
			rng{s: 100, e: 200, tc: 3}, false, []rng{{100, 200, 3}}, true},
		{"the walk is done at the window's end", func() rangeWalk { w := walkAt(-1, rng{s: 180, tc: 3}, true); w.q.e = 200; return w }(), 200,
			rng{s: 180, tc: 3}, false, nil, true},
		{"a fall cuts the range", walkAt(1, rng{s: 100, tc: 3}, true), 200,
			rng{s: 200, tc: 2}, true, []rng{{100, 200, 3}}, false},
		{"a fall at the range's start replaces it", walkAt(1, rng{s: 200, tc: 3}, true), 200,
			rng{s: 200, tc: 2}, true, nil, false},
		{"a rise above the job's size does not cut", walkAt(4, rng{s: 100, tc: 4}, true), 200,
			rng{s: 100, tc: 4}, true, nil, false},
		{"before the start the range begins lower", walkAt(1, rng{s: 100, tc: 3}, true), 80,
			rng{s: 100, tc: 2}, true, nil, false},
	} {
		done := c.w.shrink(c.at)
		checkWalk(t, c.name, c.w, c.cur, c.active, c.out)
		if done != c.done || c.w.added || c.w.removed {
			t.Errorf("%s: done %v added %v removed %v, want %v false false", c.name, done, c.w.added, c.w.removed, c.done)
		}
	}
}

func TestRangeWalkGrow(t *testing.T) {
	for _, c := range []struct {
		name string
		w    rangeWalk
		cur  rng
		out  []rng
	}{
		{"a rise cuts the range", walkAt(3, rng{s: 100, tc: 2}, true), rng{s: 200, tc: 4}, []rng{{100, 200, 2}}},
		{"the same count goes on", walkAt(1, rng{s: 100, tc: 2}, true), rng{s: 100, tc: 2}, nil},
		{"a fall below the job's size cuts", walkAt(2, rng{s: 100, tc: 5}, true), rng{s: 200, tc: 3}, []rng{{100, 200, 5}}},
		{"a fall above the job's size goes on", walkAt(4, rng{s: 100, tc: 6}, true), rng{s: 100, tc: 6}, nil},
	} {
		c.w.grow(200)
		checkWalk(t, c.name, c.w, c.cur, true, c.out)
	}
}

func TestRangeWalkResume(t *testing.T) {
	for _, c := range []struct {
		name   string
		avl    int
		at     int64
		cur    rng
		active bool
	}{
		{"enough again reopens", 1, 200, rng{s: 200, tc: 2}, true},
		{"before the start it reopens at the start", 1, 80, rng{s: 100, tc: 2}, true},
		{"still short stays closed", -1, 200, rng{s: 10, e: 20, tc: 9}, false},
	} {
		w := walkAt(c.avl, rng{s: 10, e: 20, tc: 9}, false)
		w.resume(c.at)
		checkWalk(t, c.name, w, c.cur, c.active, nil)
		if w.added || w.removed {
			t.Errorf("%s: flags not reset", c.name)
		}
	}
}

func TestRangeWalkFinish(t *testing.T) {
	w := walkAt(0, rng{s: 100, tc: 1}, true)
	if got := w.finish(); !slices.Equal(got, []rng{{100, rangeEnd, 1}}) {
		t.Errorf("an open range never ends: %v", got)
	}
	w = walkAt(0, rng{s: 100, tc: 1}, false)
	if got := w.finish(); len(got) != 0 {
		t.Errorf("a closed walk adds nothing: %v", got)
	}
}

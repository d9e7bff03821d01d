package coalloc

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortByTimeMatchesComparisonSort: the radix sort gives (time, node)
// order for edges appended in node order, also for wide time spans.
func TestSortByTimeMatchesComparisonSort(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for round := range 200 {
		n := r.IntN(500)
		span := []int64{10, 1 << 20, 1 << 40, 1 << 62}[round%4]
		ev := make([]event, n)
		for i := range ev {
			ev[i] = event{at: r.Int64N(span) - span/2, node: int32(i / 3), procs: int32(i)}
		}
		want := slices.Clone(ev)
		slices.SortStableFunc(want, eventCmp)
		sortByTime(ev)
		if !slices.Equal(ev, want) {
			t.Fatalf("round %d: radix order differs", round)
		}
	}
}

// TestEventListInsertKeepsOrder: chunked insertion keeps (time, node)
// order and splits chunks as they fill.
func TestEventListInsertKeepsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	var want []event
	l := newEventList(nil)
	for i := range 10000 {
		e := event{at: r.Int64N(5000), node: int32(r.IntN(50)), procs: int32(i)}
		l.insert(e)
		i, _ := slices.BinarySearchFunc(want, e, eventCmp)
		for i < len(want) && eventCmp(want[i], e) == 0 {
			i++
		}
		want = slices.Insert(want, i, e)
	}
	var got []event
	l.all(func(e event) { got = append(got, e) })
	if l.n != len(want) || len(l.chunks) < 2 {
		t.Fatalf("n %d chunks %d", l.n, len(l.chunks))
	}
	for i := range got {
		if eventCmp(got[i], want[i]) != 0 {
			t.Fatalf("edge %d out of order", i)
		}
	}
}

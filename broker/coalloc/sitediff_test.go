package coalloc

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"lookahead/forecast"
)

// TestDiffSiteSameDelta: the difference diffSite adds for a site's new
// slots (runs paired by node, or grouped when the runs do not match; cut
// to [the cycle's start, the cut)) is the one of adding every slot of
// every node whose slots differ, old ones subtracted and new ones added,
// slot by slot (the algorithm before, cut at the same instant): the same
// edges and the same first instants per node and price.
func TestDiffSiteSameDelta(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 8))
	kinds := map[string]int{}
	for range 3000 {
		fcs, opts := randInstance(r)
		opts.NotBefore = int64(10 * r.IntN(6))
		p, err := NewPool(fcs, opts)
		if err != nil {
			t.Fatal(err)
		}
		site := int32(r.IntN(len(fcs)))
		old := fcs[site].Slots
		cur, kind := changedSlots(r, fcs[site], opts.NotBefore)
		kinds[kind]++
		cut := []int64{math.MaxInt64, 40, 75, 100, 5}[r.IntN(5)]
		got := &walk{p: p, d: newDelta(opts.NotBefore, p.nodeClass), cut: cut}
		got.diffSite(site, old, cur)
		got.flushDiff()
		want := &walk{p: p, d: newDelta(opts.NotBefore, p.nodeClass)}
		diffSlotBySlot(want, site, old, cur, cut)
		if !reflect.DeepEqual(got.d.edges, want.d.edges) || !reflect.DeepEqual(got.d.first, want.d.first) {
			t.Fatalf("%s: old %+v new %+v from %d cut %d:\ngot %+v %+v\nwant %+v %+v", kind, old, cur, opts.NotBefore, cut,
				got.d.edges, got.d.first, want.d.edges, want.d.first)
		}
	}
	for _, k := range []string{"same", "before start", "horizon", "node revised", "reordered", "node gone"} {
		if kinds[k] == 0 {
			t.Fatalf("no case of kind %q: %v", k, kinds)
		}
	}
}

// changedSlots returns the site's slots changed in one of several ways a
// new forecast changes them.
func changedSlots(r *rand.Rand, f forecast.Forecast, from int64) ([]forecast.Slot, string) {
	cur := slices.Clone(f.Slots)
	switch r.IntN(6) {
	case 0:
		return cur, "same"
	case 1: // what starts before the cycle moves (a forecast rebuilt at now)
		for i := range cur {
			if cur[i].Start < from {
				cur[i].Start = from - int64(r.IntN(3))
			}
		}
		return cur, "before start"
	case 2: // the horizon moved on
		for i := range cur {
			if r.IntN(2) == 0 {
				cur[i].End += 10
			}
		}
		return cur, "horizon"
	case 3:
		i := r.IntN(len(cur))
		cur[i].Procs, cur[i].Price = 1+r.IntN(3), float64(1+r.IntN(3))
		cur = append(cur, forecast.Slot{Node: cur[i].Node, Procs: 1, Start: 5, End: 95, Price: 2})
		return cur, "node revised"
	case 4:
		r.Shuffle(len(cur), func(i, j int) { cur[i], cur[j] = cur[j], cur[i] })
		return cur, "reordered"
	}
	n := f.Nodes[r.IntN(len(f.Nodes))].Name
	return slices.DeleteFunc(cur, func(s forecast.Slot) bool { return s.Node == n }), "node gone"
}

// diffSlotBySlot is the difference as it was taken before: every slot
// of a node whose slots are not equal, added one by one (cut at cut).
func diffSlotBySlot(w *walk, site int32, old, cur []forecast.Slot, cut int64) {
	byNode := map[string]*[2][]forecast.Slot{}
	for k, slots := range [2][]forecast.Slot{old, cur} {
		for _, s := range slots {
			if byNode[s.Node] == nil {
				byNode[s.Node] = &[2][]forecast.Slot{}
			}
			byNode[s.Node][k] = append(byNode[s.Node][k], s)
		}
	}
	for name, g := range byNode {
		if slices.Equal(g[0], g[1]) {
			continue
		}
		n, ok := w.node(site, name)
		if !ok {
			continue
		}
		for k, sign := range [2]int64{-1, 1} {
			for _, s := range g[k] {
				w.d.add(n, s.Price, s.Start, min(s.End, cut), sign*int64(s.Procs))
			}
		}
	}
}

package coalloc

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDeltaSummaryNeverMissesAChange: with a difference large enough that
// its per-class summary is updated in place (more than exactBelow keys),
// touches still reports every job whose slots changed before its reach
// (the summary may be stale the other way, never this way), also after
// changes that cancel out (keys removed, instants moved later).
func TestDeltaSummaryNeverMissesAChange(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const nodes, classes = 9000, 6
	nodeClass := make([]int32, nodes)
	for i := range nodeClass {
		nodeClass[i] = int32(r.IntN(classes))
	}
	prices := []float64{0.5, 1, 1.5, 2, 3}
	d := newDelta(0, nodeClass)
	type change struct {
		n                 int32
		price             float64
		start, end, procs int64
	}
	var done []change
	stale := 0
	for step := range 20000 {
		var c change
		if len(done) > 0 && r.IntN(4) == 0 { // undo an earlier change
			i := r.IntN(len(done))
			c = done[i]
			c.procs = -c.procs
			done = slices.Delete(done, i, i+1)
		} else {
			c = change{n: int32(r.IntN(nodes)), price: prices[r.IntN(len(prices))], start: int64(r.IntN(1_000_000))}
			c.end, c.procs = c.start+1+int64(r.IntN(30_000)), int64(r.IntN(17)-8)
			done = append(done, c)
		}
		d.add(c.n, c.price, c.start, c.end, c.procs)
		if step%97 != 0 {
			continue
		}
		for range 20 {
			ok := make([]bool, classes)
			for i := range ok {
				ok[i] = r.IntN(2) == 0
			}
			// reach just after the earliest change the query may see (it
			// must be reported) or at it (it must not, unless stale)
			maxPrice, gain := prices[r.IntN(len(prices))], r.IntN(2) == 0
			first := int64(math.MaxInt64)
			for k, f := range d.first {
				at := f.any
				if gain {
					at = f.pos
				}
				if ok[nodeClass[k.node]] && k.price <= maxPrice {
					first = min(first, at)
				}
			}
			if first == math.MaxInt64 {
				continue
			}
			reach := first + int64(r.IntN(2))
			want := reach > first
			got := d.touches(ok, maxPrice, reach, gain)
			if want && !got {
				t.Fatalf("step %d (%d keys): touches missed a change (class set %v, price %v, reach %d, gain only %v)",
					step, len(d.first), ok, maxPrice, reach, gain)
			}
			if got && !want {
				stale++
			}
		}
	}
	if len(d.first) < exactBelow {
		t.Fatalf("only %d keys: the in-place summary was not exercised", len(d.first))
	}
	t.Logf("%d keys at the end; %d stale answers", len(d.first), stale)
}

// TestInsertFrontKeepsTheParetoFront: inserting points one by one gives,
// for every price, the earliest instant at or below it.
func TestInsertFrontKeepsTheParetoFront(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		var fr []front
		var all []front
		for range r.IntN(40) {
			f := front{price: float64(r.IntN(10)), at: int64(r.IntN(50))}
			fr = insertFront(fr, f)
			all = append(all, f)
		}
		for i := 1; i < len(fr); i++ {
			if fr[i].price <= fr[i-1].price || fr[i].at >= fr[i-1].at {
				t.Fatalf("not a front: %v", fr)
			}
		}
		for p := -1.0; p <= 10; p++ {
			want := int64(math.MaxInt64)
			for _, f := range all {
				if f.price <= p {
					want = min(want, f.at)
				}
			}
			got := int64(math.MaxInt64)
			for _, f := range fr {
				if f.price <= p {
					got = f.at
				}
			}
			if got != want {
				t.Fatalf("price %v: front says %d, points %d (%v from %v)", p, got, want, fr, all)
			}
		}
	}
}

package coalloc

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// greedySorted is greedy as it was before the heap: every run sorted
// (stably) by unit cost, faster node, forecast order; the takes summed
// per node in a map. The reference of TestGreedyMatchesSort.
func (p *Pool) greedySorted(caps []nodeCap, P, from, to int64, maxPrice float64) ([]take, float64) {
	runs := make([]run, 0, len(caps))
	for _, nc := range caps {
		runs = p.appendRuns(runs, nc.node, nc.cap, from, to, maxPrice)
	}
	slices.SortStableFunc(runs, func(a, b run) int {
		if c := cmp.Compare(a.unit, b.unit); c != 0 {
			return c
		}
		if c := cmp.Compare(p.nodes[b.node].speed, p.nodes[a.node].speed); c != 0 {
			return c
		}
		return cmp.Compare(p.ord[a.node], p.ord[b.node])
	})
	got := map[int32]int64{}
	var cost float64
	need := P
	for _, r := range runs {
		if need == 0 {
			break
		}
		q := min(need, r.procs)
		got[r.node] += q
		cost += float64(q) * r.unit
		need -= q
	}
	takes := make([]take, 0, len(got))
	for n, q := range got {
		takes = append(takes, take{node: n, procs: q})
	}
	slices.SortFunc(takes, func(a, b take) int { return cmp.Compare(p.ord[a.node], p.ord[b.node]) })
	return takes, cost
}

// TestGreedyMatchesSort: on random pools (overlapping slots, several
// prices, equal unit costs across nodes) and random windows, greedy takes
// the same processors at the same cost (bit for bit) as the full sort.
func TestGreedyMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	checked := 0
	for inst := range 2000 {
		fcs, opts := randInstance(r)
		p, err := NewPool(fcs, opts)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			from := opts.NotBefore + int64(r.IntN(60))
			to := from + 1 + int64(r.IntN(30))
			maxPrice := float64(1 + r.IntN(3))
			var caps []nodeCap
			var total int64
			for n := range p.nodes {
				c := p.naiveMin(int32(n), from, to, p.maxRank(maxPrice))
				if c > 0 && r.IntN(4) > 0 {
					caps = append(caps, nodeCap{node: int32(n), cap: c})
					total += c
				}
			}
			if total == 0 {
				continue
			}
			P := 1 + r.Int64N(total)
			got, gc := p.greedy(caps, P, from, to, maxPrice)
			want, wc := p.greedySorted(caps, P, from, to, maxPrice)
			if !reflect.DeepEqual(got, want) || gc != wc {
				t.Fatalf("instance %d, %d of %+v over [%d,%d) at %g: heap %+v cost %v, sort %+v cost %v",
					inst, P, caps, from, to, maxPrice, got, gc, want, wc)
			}
			checked++
		}
	}
	t.Logf("%d choices compared", checked)
	if checked < 3000 {
		t.Fatalf("only %d choices compared", checked)
	}
}

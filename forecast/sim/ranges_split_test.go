package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randomRangeList is a sorted list of disjoint ranges (MRLFromA's shape)
// at coarse times, so that starts, ends and instant ranges coincide often.
func randomRangeList(r *rand.Rand, most int) []rng {
	var out []rng
	t := 100 * int64(r.IntN(4))
	for n := r.IntN(most); n > 0; n-- {
		t += 100 * int64(r.IntN(2)) // touching or with a gap
		d := 100 * int64(r.IntN(3)) // instant ranges too
		out = append(out, rng{s: t, e: t + d, tc: 1 + r.IntN(5)})
		t += d
	}
	if r.IntN(8) == 0 && len(out) > 0 {
		out[len(out)-1].e = rangeEnd
	}
	return out
}

// TestMergeRangesMatchesLegacy checks the phased mergeRanges against the
// single function it replaced, on random lists and on the start ranges
// of random node states merged as reserveRanges merges them.
func TestMergeRangesMatchesLegacy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var tmpA, tmpB []rng
	check := func(n int, r1, r2 []rng) []rng {
		want := legacyMergeRanges(slices.Clone(r1), r2, &tmpA)
		got := mergeRanges(slices.Clone(r1), r2, &tmpB)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: merge(%v, %v) = %v, want %v", n, r1, r2, got, want)
		}
		return want
	}
	for n := 0; n < 200000; n++ {
		check(n, randomRangeList(r, 7), randomRangeList(r, 7))
	}
	for n := 0; n < 200; n++ { // past maxRanges
		check(n, randomRangeList(r, 2*maxRanges), randomRangeList(r, 2*maxRanges))
	}
	for n := 0; n < 3000; n++ {
		e := randomNodeState(r)
		q := rangeQuery{s: e.now, e: rangeEnd, k: 1, d: 100 * int64(1+r.IntN(6)), t: 1 + r.IntN(12), count: maxRanges}
		var merged []rng
		for i := range e.nodes {
			ar, ok := e.snRange(i, e.nodeEvents(i), q, nil)
			if !ok {
				continue
			}
			if sr := startRanges(q.d, ar, nil); len(sr) > 0 {
				merged = check(n, merged, sr)
			}
		}
	}
}

// TestBuildRangesMatchesLegacy checks the phased buildRanges against the
// single function it replaced, on random node states and queries.
func TestBuildRangesMatchesLegacy(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	for n := 0; n < 20000; n++ {
		e := randomNodeState(r)
		for i := range e.nodes {
			ev := slices.Clone(e.nodeEvents(i))
			s := e.now + 100*int64(r.IntN(8)) - 100*int64(r.IntN(2))
			q := rangeQuery{s: s, e: s, k: 1 + r.IntN(3), d: 100 * int64(r.IntN(6)), t: r.IntN(12), count: 1 + r.IntN(4)}
			switch r.IntN(3) {
			case 0:
				q.e = rangeEnd
			case 1:
				q.e = s + 100*int64(r.IntN(6))
			}
			if r.IntN(2) == 0 {
				q.count = maxRanges
			}
			x := 0
			for x < len(ev) && ev[x].re <= q.s {
				x++
			}
			avl := e.nodes[i].procs - q.k
			if r.IntN(4) == 0 {
				avl = r.IntN(4) - 2
			}
			want, wok := e.legacyBuildRanges(ev[x:], q, avl, nil)
			got := e.buildRanges(ev[x:], q, avl, nil)
			if !wok || !slices.Equal(got, want) {
				t.Fatalf("state %d node %d query %+v avl %d: got %v, want %v %v; events %+v", n, i, q, avl, got, want, wok, ev[x:])
			}
		}
	}
}

// BenchmarkMergeRanges merges the start ranges of random node states as
// reserveRanges does, the phased mergeRanges against the single function
// it replaced.
func BenchmarkMergeRanges(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 5))
	var lists [][]rng
	for len(lists) < 2000 {
		lists = append(lists, randomRangeList(r, 12))
	}
	for _, f := range []struct {
		name  string
		merge func(r1, r2 []rng, tmp *[]rng) []rng
	}{{"legacy", legacyMergeRanges}, {"phased", mergeRanges}} {
		b.Run(f.name, func(b *testing.B) {
			var merged, tmp []rng
			for b.Loop() {
				merged = merged[:0]
				for _, l := range lists {
					merged = f.merge(merged, l, &tmp)
				}
			}
		})
	}
}

// BenchmarkBuildRanges walks the events of random node states, the phased
// buildRanges against the single function it replaced.
func BenchmarkBuildRanges(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 17))
	type tc struct {
		e  *Engine
		ev []nevent
		q  rangeQuery
	}
	var cases []tc
	for len(cases) < 2000 {
		e := randomNodeState(r)
		ev := slices.Clone(e.nodeEvents(0))
		cases = append(cases, tc{e, ev, rangeQuery{s: e.now, e: rangeEnd, k: 1, d: 300, t: 4, count: maxRanges}})
	}
	b.Run("legacy", func(b *testing.B) {
		var out []rng
		for b.Loop() {
			for _, c := range cases {
				out, _ = c.e.legacyBuildRanges(c.ev, c.q, c.e.nodes[0].procs-1, out[:0])
			}
		}
	})
	b.Run("phased", func(b *testing.B) {
		var out []rng
		for b.Loop() {
			for _, c := range cases {
				out = c.e.buildRanges(c.ev, c.q, c.e.nodes[0].procs-1, out[:0])
			}
		}
	})
}

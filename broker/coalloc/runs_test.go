package coalloc

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"lookahead/forecast"
)

// randRunPool is a random instance's pool with its run index built, and
// 1 to maxJobs random jobs; instance inst's times are scaled by 1, 60 or
// 300 in turn, so that runs fall in every length class.
func randRunPool(t *testing.T, r *rand.Rand, inst, maxJobs int) (*Pool, []forecast.JobRequest) {
	t.Helper()
	fcs, opts := randInstance(r)
	jobs := make([]forecast.JobRequest, 1+r.IntN(maxJobs))
	for i := range jobs {
		jobs[i] = randJob(r, i)
	}
	scaleTime(fcs, &opts, jobs, []int64{1, 60, 300}[inst%3])
	p, err := NewPool(fcs, opts)
	if err != nil {
		t.Fatal(err)
	}
	p.ensureRuns()
	return p, jobs
}

// TestRunsAreWindowMinima: after random placements, the run index kept up
// to date by them (1) lists exactly the runs a fresh build finds, in
// order, and (2) for every node, price cut and window, the runs that
// contain the window add up to the minimum of the node's usable
// processors over it (naiveMin, from the pieces).
func TestRunsAreWindowMinima(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	windows := 0
	for inst := range 900 {
		p, jobs := randRunPool(t, r, inst, 6)
		scale := []int64{1, 60, 300}[inst%3]
		for _, job := range jobs {
			p.Place(job)
		}
		ctx := fmt.Sprintf("instance %d", inst)
		checkRunIndex(t, p, ctx)
		byNode := map[int32][]stretch{}
		for i := range p.runs.lists {
			p.runs.lists[i].all(func(s stretch) { byNode[s.node] = append(byNode[s.node], s) })
		}
		for n := range p.nodes {
			for cut := int32(-1); cut <= int32(len(p.prices)); cut++ {
				for range 12 {
					a := p.opts.NotBefore + int64(r.IntN(90))*scale
					b := a + 1 + int64(r.IntN(60))*scale
					var sum int64
					for _, s := range byNode[int32(n)] {
						if s.lo <= cut && cut < s.hi && s.a <= a && b <= s.b {
							sum += int64(s.h)
						}
					}
					want := p.naiveMin(int32(n), a, b, min(cut, int32(len(p.prices)-1)))
					if sum != want {
						t.Fatalf("%s node %d cut %d window [%d,%d): runs give %d, the pieces %d; runs %+v pieces %+v",
							ctx, n, cut, a, b, sum, want, byNode[int32(n)], p.nodes[n].pieces)
					}
					windows++
				}
			}
		}
	}
	t.Logf("%d windows checked", windows)
}

// checkRunIndex compares the kept index with a fresh build: the same runs
// (as multisets), each list in its order.
func checkRunIndex(t *testing.T, p *Pool, ctx string) {
	t.Helper()
	var fresh []stretch
	var w runWork
	for n := range p.nodes {
		fresh = w.nodeRuns(p, int32(n), fresh)
	}
	order := func(s []stretch) []stretch {
		s = slices.Clone(s)
		slices.SortFunc(s, func(x, y stretch) int {
			return cmp.Or(cmp.Compare(x.node, y.node), cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b),
				cmp.Compare(x.h, y.h), cmp.Compare(x.lo, y.lo))
		})
		return s
	}
	var all []stretch
	for k := range p.runs.lists {
		l := &p.runs.lists[k]
		var got []stretch
		l.all(func(s stretch) { got = append(got, s) })
		if l.n != len(got) {
			t.Fatalf("%s: list counts %d runs, holds %d", ctx, l.n, len(got))
		}
		for i := range got {
			if i > 0 && l.cmpAt(&got[i-1], l.key(&got[i]), got[i].node) > 0 {
				t.Fatalf("%s: list out of order at %d: %+v then %+v", ctx, i, got[i-1], got[i])
			}
			if p.runs.slot(&got[i]) != k {
				t.Fatalf("%s: run %+v in list %d, belongs in %d", ctx, got[i], k, p.runs.slot(&got[i]))
			}
		}
		for _, ch := range l.chunks {
			if len(ch) == 0 || len(ch) > runChunkMax {
				t.Fatalf("%s: chunk of %d runs", ctx, len(ch))
			}
		}
		all = append(all, got...)
	}
	if !reflect.DeepEqual(order(all), order(fresh)) {
		t.Fatalf("%s: index holds %+v, a fresh build %+v", ctx, order(all), order(fresh))
	}
}

// TestRunListKeepsOrder inserts and removes runs at random, many per
// instant (so chunks split and the equal keys straddle them), against a
// sorted slice.
func TestRunListKeepsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	l := newRunList(nil)
	var ref []stretch
	for step := range 20000 {
		if len(ref) > 0 && r.IntN(3) == 0 {
			i := r.IntN(len(ref))
			if !l.remove(ref[i]) {
				t.Fatalf("step %d: %+v not found", step, ref[i])
			}
			ref = slices.Delete(ref, i, i+1)
		} else {
			a := int64(r.IntN(50))
			s := stretch{a: a, b: a + 1 + int64(r.IntN(50)), node: int32(r.IntN(4)), h: int32(1 + r.IntN(3)), lo: int32(r.IntN(2)), hi: math.MaxInt32}
			l.insert(s)
			ref = append(ref, s)
		}
		if l.remove(stretch{a: -1, b: -1}) {
			t.Fatalf("step %d: removed a run it never held", step)
		}
	}
	var got []stretch
	l.all(func(s stretch) { got = append(got, s) })
	if len(got) != len(ref) || l.n != len(ref) {
		t.Fatalf("%d runs (n %d), want %d", len(got), l.n, len(ref))
	}
	for i := 1; i < len(got); i++ {
		if l.cmpAt(&got[i-1], l.key(&got[i]), got[i].node) > 0 {
			t.Fatalf("out of order at %d", i)
		}
	}
	if len(l.chunks) < 2 {
		t.Fatalf("%d chunks: the test never split one", len(l.chunks))
	}
}

// scaleTime multiplies every instant and duration of an instance by k.
func scaleTime(fcs []forecast.Forecast, opts *Options, jobs []forecast.JobRequest, k int64) {
	for i := range fcs {
		fcs[i].Horizon *= k
		for j := range fcs[i].Slots {
			fcs[i].Slots[j].Start *= k
			fcs[i].Slots[j].End *= k
		}
	}
	opts.NotBefore *= k
	opts.StagingDelay *= k
	for i := range jobs {
		jobs[i].Walltime *= k
	}
}

// useBothSweeps makes every search run the deque sweep and the run sweep
// on the same pool (each from its own recorded state) and fail the test
// when their starts or capacities differ.
func (p *Pool) useBothSweeps(t *testing.T, ctx *string, searches *int) {
	p.stage1 = func(sp sweepSpec) (int64, bool) {
		*searches++
		t1, ok1 := p.sweep(sp)
		var c1 []nodeCap
		if ok1 {
			c1 = p.capacities()
		}
		t2, ok2 := p.sweepRuns(sp)
		var c2 []nodeCap
		if ok2 {
			c2 = p.capacitiesRuns()
		}
		if ok1 != ok2 || t1 != t2 || !reflect.DeepEqual(c1, c2) {
			t.Fatalf("%s: spec %+v floor %d: deque sweep %d %v %v, run sweep %d %v %v",
				*ctx, sp, p.floor, t1, ok1, c1, t2, ok2, c2)
		}
		return t2, ok2
	}
	p.stage1Caps = p.capacitiesRuns
}

// TestRunSweepMatchesDeque: every search of random queues (the random
// instances of the oracle test, and synthetic pools shaped like agents'
// forecasts) gets the same start and node capacities from both sweeps,
// with and without a floor. LOOKAHEAD_LONG=1 runs ten times as many
// random queues and four times the synthetic ones.
func TestRunSweepMatchesDeque(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	var ctx string
	searches, found := 0, 0
	run := func(fcs []forecast.Forecast, opts Options, jobs []forecast.JobRequest, floorSpan int) {
		p, err := NewPool(fcs, opts)
		if err != nil {
			t.Fatal(err)
		}
		p.useBothSweeps(t, &ctx, &searches)
		base := ctx
		for i, job := range jobs {
			p.floor = math.MinInt64
			if r.IntN(3) == 0 { // any instant: both sweeps find the earliest start after it
				p.floor = opts.NotBefore + int64(r.IntN(floorSpan))
			}
			ctx = fmt.Sprintf("%s job %d %+v", base, i, job)
			if p.Place(job).Placed() {
				found++
			}
		}
	}
	instances, synthetic := 3000, uint64(4)
	if os.Getenv("LOOKAHEAD_LONG") != "" {
		instances, synthetic = 30000, 16
	}
	for inst := range instances {
		fcs, opts := randInstance(r)
		jobs := make([]forecast.JobRequest, 1+r.IntN(6))
		for i := range jobs {
			jobs[i] = randJob(r, i)
		}
		scale := []int64{1, 60, 300}[inst%3] // runs and windows of every length class
		scaleTime(fcs, &opts, jobs, scale)
		ctx = fmt.Sprintf("instance %d (times × %d)", inst, scale)
		run(fcs, opts, jobs, 60*int(scale))
	}
	for seed := range synthetic {
		fcs := synthForecasts(3000, seed)
		opts := Options{NotBefore: synthNow + int64(seed)*3600, MultiSiteFactor: []float64{0, 1.3}[seed%2]}
		ctx = fmt.Sprintf("synthetic seed %d", seed)
		run(fcs, opts, synthQueue(60, seed), 40*3600)
	}
	t.Logf("%d searches compared, %d jobs placed", searches, found)
	if searches < 5000 || found < 1000 {
		t.Fatalf("too few searches (%d) or placements (%d) to compare", searches, found)
	}
}

// all calls f on every run in order (tests only).
func (l *runList) all(f func(stretch)) {
	for _, ch := range l.chunks {
		for _, r := range ch {
			f(r)
		}
	}
}

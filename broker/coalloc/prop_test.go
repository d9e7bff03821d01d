package coalloc

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"lookahead/forecast"
)

// randInstance builds a small random instance: a few sites and nodes with
// overlapping and abutting slots on a coarse time grid, mixed prices,
// speeds, memory and features.
func randInstance(r *rand.Rand) ([]forecast.Forecast, Options) {
	var fcs []forecast.Forecast
	for s := range 1 + r.IntN(3) {
		f := forecast.Forecast{Version: 1, Site: fmt.Sprintf("s%d", s), Horizon: 1000}
		for n := range 1 + r.IntN(3) {
			node := forecast.Node{Name: fmt.Sprintf("n%d", n), Procs: 1 + r.IntN(4),
				Speed: []float64{1, 1.5, 2}[r.IntN(3)], MemMB: []int64{500, 1000}[r.IntN(2)]}
			if r.IntN(2) == 0 {
				node.Features = []string{"ib"}
			}
			f.Nodes = append(f.Nodes, node)
			for range 1 + r.IntN(4) {
				st := int64(10 * r.IntN(8))
				f.Slots = append(f.Slots, forecast.Slot{Node: node.Name, Procs: 1 + r.IntN(node.Procs),
					Start: st, End: st + int64(10*(1+r.IntN(5))), Price: float64(1 + r.IntN(3))})
			}
		}
		if r.IntN(2) == 0 {
			// the owner states its free price (else free-first takes the
			// lowest price of all): owners may price free time differently
			f.FreePrice = float64(1 + r.IntN(2))
		}
		fcs = append(fcs, f)
	}
	// price order, the order these properties were written in (fcfs, the
	// default: TestFCFSIncrementalSameAnswers)
	opts := Options{NotBefore: []int64{0, 5, 15}[r.IntN(3)], Order: OrderPrice}
	if r.IntN(3) == 0 {
		opts.MultiSiteFactor = 1.5
	}
	if r.IntN(3) == 0 {
		opts.StagingDelay = 5
	}
	opts.Tolerance = []float64{0, 0.5, 2}[r.IntN(3)]
	opts.FreeTolerance = []float64{0, 0.5, 2}[r.IntN(3)]
	return fcs, opts
}

func randJob(r *rand.Rand, i int) forecast.JobRequest {
	j := forecast.JobRequest{ID: fmt.Sprintf("j%d", i), Procs: 1 + r.IntN(8),
		Walltime: int64(5 + r.IntN(40)), MaxPrice: float64(1 + r.IntN(3)),
		MaxSites: r.IntN(3), Submitted: int64(r.IntN(3))}
	if r.IntN(4) == 0 {
		j.MinSpeed = 1.5
	}
	if r.IntN(4) == 0 {
		j.Features = []string{"ib"}
	}
	if r.IntN(5) == 0 {
		j.MemMB = 800
	}
	crits := append([]string{""}, forecast.Criteria()...)
	j.Criterion = crits[r.IntN(len(crits))]
	return j
}

// TestAgainstOracle plans random queues and checks every answer against
// the brute-force oracle on what the earlier jobs left: a placed job is
// feasible and optimal by its criterion, takes the cheapest processors of
// its sites, a refused one has no feasible allocation, and the pool loses
// exactly what was placed.
func TestAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	placed, refused := 0, 0
	for inst := range 3000 {
		fcs, opts := randInstance(r)
		if inst%4 == 3 {
			tieSpeeds(fcs)
		}
		jobs := make([]forecast.JobRequest, 1+r.IntN(5))
		for i := range jobs {
			jobs[i] = randJob(r, i)
		}
		Options{}.SortQueue(jobs)
		p, err := NewPool(fcs, opts)
		if err != nil {
			t.Fatalf("instance %d: %v", inst, err)
		}
		free := oFreePrices(fcs, opts.NotBefore)
		for _, job := range jobs {
			before := p.Remaining()
			start, finish, ok := oracle(before, job, opts)
			if job.CriterionOrDefault() == forecast.Cheapest && ok && inst%3 > 0 {
				// a deadline from before the earliest finish to well after it
				job.Deadline = max(1, finish+int64(inst%9-2)*10)
			}
			a := p.Place(job)
			after := p.Remaining()
			ctx := fmt.Sprintf("instance %d job %+v opts %+v\nforecasts %+v\nallocation %+v", inst, job, opts, before, a)
			if !ok {
				refused++
				if a.Error == "" || !reflect.DeepEqual(before, after) {
					t.Fatalf("oracle finds no fit but planner placed or changed the pool: %s", ctx)
				}
				continue
			}
			placed++
			if err := checkAlloc(before, after, job, a, opts); err != nil {
				t.Fatalf("%v: %s", err, ctx)
			}
			// the cheapest processors of its sites: of the free ones when
			// free-first took free time only (their owners' idle time)
			judged := before
			crit := job.CriterionOrDefault()
			if (crit == forecast.FreeFirst || crit == forecast.Cheapest) && freeFits(before, job, opts, free) {
				judged = freeOnly(before, job.MaxPrice, free)
			}
			if err := checkCheapestParts(judged, job, a); err != nil {
				t.Fatalf("%v: %s", err, ctx)
			}
			switch job.CriterionOrDefault() {
			case forecast.EarliestStart:
				if a.Start != start {
					t.Fatalf("start %d, oracle's earliest %d: %s", a.Start, start, ctx)
				}
				if err := checkEarliestCost(before, job, a, opts); err != nil {
					t.Fatalf("%v: %s", err, ctx)
				}
			case forecast.EarliestFinish:
				if a.End != finish {
					t.Fatalf("end %d, oracle's earliest %d: %s", a.End, finish, ctx)
				}
				if err := checkEarliestCost(before, job, a, opts); err != nil {
					t.Fatalf("%v: %s", err, ctx)
				}
			case forecast.LeastHeld, forecast.FreeFirst:
				if err := checkLeastHeld(before, job, a, opts, free); err != nil {
					t.Fatalf("%v: %s", err, ctx)
				}
			case forecast.Cheapest:
				if err := checkCheapest(before, job, a, opts, free, finish); err != nil {
					t.Fatalf("%v: %s", err, ctx)
				}
			}
		}
	}
	t.Logf("%d placed, %d refused", placed, refused)
	if placed < 1000 || refused < 100 {
		t.Fatalf("generator too lopsided: %d placed, %d refused", placed, refused)
	}
}

// tieSpeeds makes the nodes of speed 1.5 run at 1.99: on an odd walltime
// under 199 s they then hold exactly as long as the nodes of speed 2 (the
// durations are rounded up to the second), so two tiers tie on start and
// end and only the price can tell them apart.
func tieSpeeds(fcs []forecast.Forecast) {
	for i := range fcs {
		for k := range fcs[i].Nodes {
			if fcs[i].Nodes[k].Speed == 1.5 {
				fcs[i].Nodes[k].Speed = 1.99
			}
		}
	}
}

// TestCoarseTiersFeasible: with configured tiers the answer may not be
// optimal but must be feasible, and no worse a refusal than exact tiers.
func TestCoarseTiersFeasible(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for inst := range 1000 {
		fcs, opts := randInstance(r)
		opts.Tiers = []float64{1.7}
		p, err := NewPool(fcs, opts)
		if err != nil {
			t.Fatal(err)
		}
		job := randJob(r, 0)
		before := p.Remaining()
		_, _, ok := oracle(before, job, opts)
		a := p.Place(job)
		if ok != (a.Error == "") {
			t.Fatalf("instance %d: oracle fit %v, planner %+v", inst, ok, a)
		}
		if ok {
			if err := checkAlloc(before, p.Remaining(), job, a, opts); err != nil {
				t.Fatalf("instance %d: %v", inst, err)
			}
		}
	}
}

// TestRemainingOfFreshPool: a fresh pool's Remaining offers what the
// forecasts offered from NotBefore on, at every instant and price.
func TestRemainingOfFreshPool(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for inst := range 500 {
		fcs, opts := randInstance(r)
		p, err := NewPool(fcs, opts)
		if err != nil {
			t.Fatal(err)
		}
		rem := p.Remaining()
		for k, n := range oNodes(fcs) {
			got := oNodes(rem)[k].slots
			for u := opts.NotBefore; u < 200; u++ {
				for _, pr := range []float64{1, 2, 3} {
					if a, b := levelAt(n.slots, u, pr), levelAt(got, u, pr); a != b {
						t.Fatalf("instance %d node %s at %d price %v: forecast %d, remaining %d", inst, k, u, pr, a, b)
					}
				}
			}
		}
	}
}

package coalloc

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"lookahead/forecast"
)

// TestQueueOrder: with Order fcfs, and by default (""), the job submitted
// first is planned first whatever the others pay; with price the job
// paying more is.
func TestQueueOrder(t *testing.T) {
	fc := forecast.Forecast{Version: 1, Site: "a", Horizon: 1000,
		Nodes: []forecast.Node{{Name: "n", Procs: 1, Speed: 1}},
		Slots: []forecast.Slot{{Node: "n", Procs: 1, Start: 0, End: 1000, Price: 1}}}
	jobs := []forecast.JobRequest{
		{ID: "early", Procs: 1, Walltime: 100, MaxPrice: 1, Submitted: 1},
		{ID: "rich", Procs: 1, Walltime: 100, MaxPrice: 3, Submitted: 2},
	}
	for order, first := range map[string]string{"": "early", OrderPrice: "rich", OrderFCFS: "early"} {
		out, err := PlanQueue([]forecast.Forecast{fc}, jobs, Options{Order: order})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range out {
			if (a.Start == 0) != (a.Job == first) {
				t.Errorf("order %q: %s starts at %d, want %s first", order, a.Job, a.Start, first)
			}
		}
	}
	big := append(jobs, forecast.JobRequest{ID: "big", Procs: 1, Walltime: 300, MaxPrice: 1, Submitted: 3})
	for _, c := range []struct {
		aging float64
		first string
	}{{0, "big"}, {3600, "big"}, {10, "early"}} { // big 1/12 CPU-hour, early 1/36: big counts 200 s earlier at 3600 s per CPU-hour, under 1 s at 10
		out, err := PlanQueue([]forecast.Forecast{fc}, big, Options{Order: OrderArea, Aging: c.aging})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range out {
			if (a.Start == 0) != (a.Job == c.first) {
				t.Errorf("order area, aging %g: %s starts at %d, want %s first", c.aging, a.Job, a.Start, c.first)
			}
		}
	}
	if got := (Options{}).QueueOrder(); got != OrderFCFS {
		t.Errorf("the default queue order is %q, want %q", got, OrderFCFS)
	}
	if err := (Options{Order: "random"}).Validate(); err == nil {
		t.Error("order random: no error")
	}
}

// TestFCFSIncrementalSameAnswers: in FCFS order the incremental planner
// answers as placing each job in turn (PlanEach), cycle after cycle while
// jobs come and go and time passes; so does it in the studies' area
// order, by size alone or aged.
func TestFCFSIncrementalSameAnswers(t *testing.T) {
	setup := func(it int, o *Options) {
		o.Order = OrderFCFS
		if it%3 > 0 {
			o.Order, o.Aging = OrderArea, float64(it%2)*30
		}
	}
	eachIncrementalCycle(t, rand.New(rand.NewPCG(3, 5)), setup, func(c incCycle) {
		want, err := PlanEach(c.fcs, c.jobs, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.got, want) {
			t.Fatalf("instance %d cycle %d: incremental %+v\nfrom scratch %+v", c.it, c.cycle, c.got, want)
		}
	})
}

// incCycle is one cycle of eachIncrementalCycle: the instance and cycle,
// its input (opts.NotBefore the cycle's now) and the incremental
// planner's answers and stats.
type incCycle struct {
	it, cycle int
	fcs       []forecast.Forecast
	jobs      []forecast.JobRequest
	opts      Options
	got       []forecast.Allocation
	st        Stats
}

// eachIncrementalCycle plans 300 random instances (randInstance, options
// set by setup) with one incremental planner each over 4 cycles while
// jobs come and go and time passes, and hands every cycle to check.
func eachIncrementalCycle(t *testing.T, r *rand.Rand, setup func(it int, o *Options), check func(incCycle)) {
	t.Helper()
	for it := range 300 {
		fcs, opts := randInstance(r)
		setup(it, &opts)
		in, err := NewIncremental(opts)
		if err != nil {
			t.Fatal(err)
		}
		var jobs []forecast.JobRequest
		for cycle := range 4 {
			for k := range 1 + r.IntN(3) {
				jobs = append(jobs, randJob(r, 10*cycle+k))
			}
			if len(jobs) > 2 && r.IntN(2) == 0 {
				jobs = jobs[1:]
			}
			o := opts
			o.NotBefore += int64(5 * cycle)
			got, st, err := in.Plan(fcs, jobs, o.NotBefore)
			if err != nil {
				t.Fatal(err)
			}
			check(incCycle{it: it, cycle: cycle, fcs: fcs, jobs: jobs, opts: o, got: got, st: st})
		}
	}
}

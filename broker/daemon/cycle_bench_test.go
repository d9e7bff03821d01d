package daemon

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"lookahead/broker"
	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/internal/cputime"
)

// synthetic builds sites × nodes × 8-proc nodes whose horizon (48 h) is cut
// by local jobs into 4–6 slots per node, with mixed speeds and prices, and
// a queue of jobs of mixed sizes, walltimes and prices.
func synthetic(sites, nodes, jobs int) ([]forecast.Forecast, []forecast.JobRequest) {
	rng := rand.New(rand.NewPCG(7, 11))
	const t0, horizon = 1763780000, 48 * 3600
	fcs := make([]forecast.Forecast, sites)
	for s := range fcs {
		fcs[s] = syntheticSite(rng, fmt.Sprintf("site%02d", s), s, nodes, t0, horizon)
	}
	return fcs, syntheticQueue(rng, jobs, t0)
}

// benchPlanner is the planner of the benchmarks: price order, the order
// their figures in docs/broker.md were measured in (the default before
// issue 33's study; "after=arrive" is a high payer that it plans early).
var benchPlanner = PlannerOptions{Order: coalloc.OrderPrice}

// eachPlanner is the planner before issue 21 (every job placed from
// scratch every cycle): the baseline of the benchmarks below.
func eachPlanner(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) ([]forecast.Allocation, error) {
	return coalloc.PlanEach(fcs, jobs, coalloc.Options{NotBefore: notBefore, Order: benchPlanner.Order})
}

// BenchmarkPlanningCycle is one broker planning cycle (holds applied,
// whole queue planned with the co-allocation core) for waiting jobs over
// sites × 200 nodes. algo=each is the baseline (today's algorithm before
// issue 21: every job from scratch); algo=first is the incremental
// planner's first cycle (from scratch, with no-fit dominance; runs=coarse:
// over the run index before issue 39's finer one; crit=: with
// that criterion and the broker's default tolerances); the others
// are a primed incremental planner's next cycle after: time=: only time
// passed (one second); site=: one site's forecast changed (a new revision
// with one node's slots moved); arrive=: one job submitted; commit=: the
// highest-priority placed job committed (its hold in the forecasts, gone
// from the queue). jobs=10000 runs with LOOKAHEAD_BENCH_10K=1 (the
// baseline takes minutes).
func BenchmarkPlanningCycle(b *testing.B) {
	cases := []struct{ sites, jobs int }{{50, 1000}, {50, 100}, {10, 1000}}
	if os.Getenv("LOOKAHEAD_BENCH_10K") != "" {
		cases = append(cases, struct{ sites, jobs int }{50, 10000})
	}
	for _, c := range cases {
		fcs, queue := synthetic(c.sites, 200, c.jobs)
		slots := 0
		for _, f := range fcs {
			slots += len(f.Slots)
		}
		in := broker.CycleInput{Now: 1763780000, Forecasts: fcs, Jobs: queue}
		name := fmt.Sprintf("sites=%d/nodes=200/slots=%d/jobs=%d", c.sites, slots, c.jobs)
		b.Run(name+"/algo=each", func(b *testing.B) { benchCycle(b, in, eachPlanner) })
		b.Run(name+"/algo=first", func(b *testing.B) { benchFirst(b, in, false) })
		b.Run(name+"/algo=first/runs=coarse", func(b *testing.B) { benchFirst(b, in, true) })
		for _, crit := range []string{forecast.LeastHeld, forecast.FreeFirst} {
			// the criterion's cost, with the broker's default tolerances
			opts := benchPlanner
			opts.Criterion, opts.Tolerance, opts.FreeTolerance = crit, coalloc.DefaultTolerance, coalloc.DefaultFreeTolerance
			b.Run(name+"/algo=first/crit="+crit, func(b *testing.B) {
				benchCycle(b, in, func(f []forecast.Forecast, j []forecast.JobRequest, nb int64) ([]forecast.Allocation, error) {
					return NewPlanner(opts).Plan(f, j, nb)
				})
			})
		}
		for _, ch := range []string{"time", "site", "arrive", "commit"} {
			b.Run(name+"/after="+ch, func(b *testing.B) { benchNext(b, in, ch, benchPlanner) })
		}
	}
}

// benchFirst is the incremental planner's first cycle; coarse: over the
// co-allocation core's run index before issue 39 (coalloc.SetCoarseRuns),
// the baseline of its finer one.
func benchFirst(b *testing.B, in broker.CycleInput, coarse bool) {
	defer coalloc.SetCoarseRuns(coalloc.SetCoarseRuns(coarse))
	benchCycle(b, in, func(f []forecast.Forecast, j []forecast.JobRequest, nb int64) ([]forecast.Allocation, error) {
		return NewPlanner(benchPlanner).Plan(f, j, nb)
	})
}

func benchCycle(b *testing.B, in broker.CycleInput, plan broker.Planner) {
	placed := 0
	c0 := cputime.Used()
	stop := profileTimed(b)
	for i := 0; i < b.N; i++ {
		allocs, err := broker.PlanCycle(in, plan)
		if err != nil {
			b.Fatal(err)
		}
		placed = countPlaced(allocs)
	}
	stop()
	b.ReportMetric(float64(cputime.Used()-c0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(placed), "placed")
}

// profileTimed writes a CPU profile of what a benchmark times (not its
// priming) to the folder LOOKAHEADTEST_SCALE_PROFILE names, one file per
// benchmark, when it is set (do not combine with -cpuprofile); stop ends
// it.
func profileTimed(b *testing.B) (stop func()) {
	dir := os.Getenv("LOOKAHEADTEST_SCALE_PROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, strings.NewReplacer("/", "_", "=", "-").Replace(b.Name())+".pprof"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// benchNext times the cycle after one change, on a planner primed with
// the cycle before it (untimed).
func benchNext(b *testing.B, in broker.CycleInput, change string, opts PlannerOptions) {
	var st coalloc.Stats
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pl := NewPlanner(opts)
		allocs, err := broker.PlanCycle(in, pl.Plan)
		if err != nil {
			b.Fatal(err)
		}
		next := nextInput(in, allocs, change)
		c0 := cputime.Used()
		stop := profileTimed(b)
		b.StartTimer()
		if _, err := broker.PlanCycle(next, pl.Plan); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		stop()
		cpu += cputime.Used() - c0
		b.StartTimer()
		st = pl.TakeStats()
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(st.Replanned()), "replanned")
	b.ReportMetric(float64(st.Reused), "reused")
	b.ReportMetric(float64(st.Differ), "changed-answers")
}

// nextInput is the input of the next cycle after one change.
func nextInput(in broker.CycleInput, allocs []forecast.Allocation, change string) broker.CycleInput {
	next := in
	next.Now++
	switch change {
	case "site":
		next.Forecasts = slices.Clone(in.Forecasts)
		f := &next.Forecasts[len(next.Forecasts)/2]
		f.Seq++
		f.Slots = slices.Clone(f.Slots)
		for k := range f.Slots {
			if f.Slots[k].Node == f.Nodes[0].Name && f.Slots[k].End-f.Slots[k].Start > 3600 {
				f.Slots[k].Start += 1800
			}
		}
	case "arrive":
		j := in.Jobs[0]
		j.ID, j.Procs = "arrived", 24
		next.Jobs = append(slices.Clone(in.Jobs), j)
	case "commit":
		order := slices.Clone(in.Jobs)
		coalloc.Options{Order: benchPlanner.Order}.SortQueue(order)
		for _, j := range order {
			i := slices.IndexFunc(allocs, func(a forecast.Allocation) bool { return a.Job == j.ID })
			if !allocs[i].Placed() {
				continue
			}
			rev := map[string]uint64{}
			for _, f := range in.Forecasts {
				rev[f.Site] = f.Seq
			}
			next.Holds = append(slices.Clone(in.Holds), broker.Hold{Alloc: allocs[i], Revisions: rev})
			next.Jobs = slices.DeleteFunc(slices.Clone(in.Jobs), func(q forecast.JobRequest) bool { return q.ID == j.ID })
			break
		}
	}
	return next
}

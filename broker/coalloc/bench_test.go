package coalloc

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
	"lookahead/internal/cputime"
)

// TestNaiveMatchesSweep: on medium synthetic pools the sweep and the naive
// baseline plan every job of a queue identically.
func TestNaiveMatchesSweep(t *testing.T) {
	for seed := range uint64(4) {
		fcs := synthForecasts(1000, seed)
		jobs := synthQueue(30, seed)
		Options{}.SortQueue(jobs)
		opts := []Options{{NotBefore: synthNow}, {NotBefore: synthNow + 3600, MultiSiteFactor: 1.2, StagingDelay: 600}}[seed%2]
		fast, err := NewPool(fcs, opts)
		if err != nil {
			t.Fatal(err)
		}
		naive, _ := NewPool(fcs, opts)
		naive.useNaive()
		placed := 0
		for _, j := range jobs {
			a, b := fast.Place(j), naive.Place(j)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d job %s: sweep %+v\nnaive %+v", seed, j.ID, a, b)
			}
			if a.Placed() {
				placed++
			}
		}
		if placed < len(jobs)/4 {
			t.Fatalf("seed %d: only %d of %d placed", seed, placed, len(jobs))
		}
	}
}

// loopCPU runs f in b.Loop and reports CPU time per operation.
func loopCPU(b *testing.B, f func()) {
	b.Helper()
	b.ReportAllocs()
	c0 := cputime.Used()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64(cputime.Used()-c0)/float64(b.N), "cpu-ns/op")
}

func benchPool(b *testing.B, n int) (*Pool, int) {
	b.Helper()
	fcs := synthForecasts(n, 1)
	slots := 0
	for _, f := range fcs {
		slots += len(f.Slots)
	}
	p, err := NewPool(fcs, Options{NotBefore: synthNow})
	if err != nil {
		b.Fatal(err)
	}
	return p, slots
}

// benchSelect: runs=coarse is the run index before issue 39's classes
// (coarseRuns), the baseline of the run sweep's.
func benchSelect(b *testing.B, sizes []int, naive bool) {
	runs := []string{""}
	if !naive {
		runs = append(runs, "/runs=coarse")
	}
	for _, n := range sizes {
		for _, index := range runs {
			b.Run(fmt.Sprintf("slots=%s%s", human(n), index), func(b *testing.B) {
				coarseRuns = index != ""
				defer func() { coarseRuns = false }()
				benchSelectOne(b, n, naive)
			})
		}
	}
}

// benchSelectOne: one job's selection over a pool of about n slots.
func benchSelectOne(b *testing.B, n int, naive bool) {
	p, slots := benchPool(b, n)
	if naive {
		p.useNaive()
	}
	job := synthJob()
	pl, reason := p.selectJob(job)
	if reason != "" {
		b.Fatal(reason)
	}
	loopCPU(b, func() { p.selectJob(job) })
	b.ReportMetric(float64(slots), "slots")
	b.ReportMetric(float64(pl.start-synthNow)/3600, "start-h")
}

func human(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// BenchmarkSelect: one 256-processor job over synthetic pools (stage 1
// over all tiers plus stage 2's node choice, nothing removed).
func BenchmarkSelect(b *testing.B) {
	benchSelect(b, []int{10_000, 100_000, 1_000_000}, false)
}

// BenchmarkSelectNaive: the same with the quadratic baseline for stage 1.
func BenchmarkSelectNaive(b *testing.B) {
	benchSelect(b, []int{10_000, 100_000}, true)
}

// BenchmarkNewPool: indexing once per cycle. index=runs adds the run
// index the first search builds (the run sweep's), index=edges the edge
// list instead (the deque sweep's, which NewPool built before the run
// sweep).
func BenchmarkNewPool(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		fcs := synthForecasts(n, 1)
		for _, index := range []string{"none", "runs", "edges"} {
			b.Run(fmt.Sprintf("slots=%s/index=%s", human(n), index), func(b *testing.B) {
				loopCPU(b, func() {
					p, err := NewPool(fcs, Options{NotBefore: synthNow})
					if err != nil {
						b.Fatal(err)
					}
					switch index {
					case "runs":
						p.ensureRuns()
					case "edges":
						p.ensureEvents()
					}
				})
			})
		}
	}
}

// BenchmarkPlanQueue: a 1000-job queue over 100k slots, pool built
// included; with exact tiers (one sweep per node speed) and with one
// coarse tier (speed >= 1.2, plus the slowest speed). algo=each is the
// baseline (every job placed with Pool.Place, as before issue 21),
// algo=queue is PlanQueue (no-fit dominance). sweep=deque is PlanQueue
// with the deque sweep (sweep.go) instead of the run sweep: the stage 1
// before issue 21's third round, the baseline of the run sweep. runs=coarse
// is PlanQueue over the run index before issue 39's finer classes
// (coarseRuns).
func BenchmarkPlanQueue(b *testing.B) {
	fcs := synthForecasts(100_000, 1)
	jobs := synthQueue(1000, 1)
	for _, c := range []struct {
		name string
		opts Options
		plan func([]forecast.Forecast, []forecast.JobRequest, Options) ([]forecast.Allocation, error)
	}{
		{"jobs=1000/slots=100k/algo=each", Options{NotBefore: synthNow}, PlanEach},
		{"jobs=1000/slots=100k/algo=queue", Options{NotBefore: synthNow}, PlanQueue},
		{"jobs=1000/slots=100k/tiers=1.2/algo=each", Options{NotBefore: synthNow, Tiers: []float64{1.2}}, PlanEach},
		{"jobs=1000/slots=100k/tiers=1.2/algo=queue", Options{NotBefore: synthNow, Tiers: []float64{1.2}}, PlanQueue},
		{"jobs=1000/slots=100k/algo=queue/sweep=deque", Options{NotBefore: synthNow}, PlanQueue},
		{"jobs=1000/slots=100k/algo=queue/runs=coarse", Options{NotBefore: synthNow}, PlanQueue},
	} {
		b.Run(c.name, func(b *testing.B) {
			dequeSweep = strings.HasSuffix(c.name, "sweep=deque")
			coarseRuns = strings.HasSuffix(c.name, "runs=coarse")
			defer func() { dequeSweep, coarseRuns = false, false }()
			loopPlan(b, c.plan, fcs, jobs, c.opts)
		})
	}
}

// BenchmarkSelectNoFit: a job no pool can hold (1024 processors on one
// site for two days under 1.2 credits), so every sweep runs over all edges
// of every tier: the sweep's worst case, linear in the slots.
func BenchmarkSelectNoFit(b *testing.B) {
	job := forecast.JobRequest{ID: "nofit", Procs: 1024, Walltime: 48 * 3600, MaxPrice: 1.2, MaxSites: 1}
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("slots=%s", human(n)), func(b *testing.B) {
			p, _ := benchPool(b, n)
			if _, reason := p.selectJob(job); reason != NoFitCapacity {
				b.Fatalf("job fits: %q", reason)
			}
			loopCPU(b, func() { p.selectJob(job) })
		})
	}
}

// bigSite is one site's largest valid forecast as the issue measured it:
// 5,000 nodes × 100 slots (500,000 slots).
func bigSite() forecast.Forecast {
	f := forecast.Forecast{Version: 1, Site: "big", Seq: 1, Generated: synthNow, Horizon: synthNow + 7*86400}
	for n := range 5000 {
		name := fmt.Sprintf("b%05d", n)
		f.Nodes = append(f.Nodes, forecast.Node{Name: name, Procs: 4, Speed: 1, MemMB: 8000})
		for k := range int64(100) {
			start := synthNow + k*6000 + int64(n%7)*60
			f.Slots = append(f.Slots, forecast.Slot{Node: name, Procs: 4, Start: start, End: start + 3000, Price: 2})
		}
	}
	return f
}

// BenchmarkBigSite: what a 500,000-slot site adds to a cycle of 100 jobs
// over a 64k-slot grid. algo=each is the baseline (every cycle from
// scratch); first is the incremental planner's first cycle; time and
// site are its next cycle after a second passed, and after another
// site's forecast changed (one node's slots gone). B/op of "first" is
// the memory a cycle allocates; the planner keeps the per-job cache (the
// jobs' answers and taken pieces) and references to the forecasts.
func BenchmarkBigSite(b *testing.B) {
	small := synthForecasts(64_000, 3)
	jobs := synthQueue(100, 3)
	for _, withBig := range []bool{false, true} {
		fcs := small
		if withBig {
			fcs = append(slices.Clone(small), bigSite())
		}
		name := fmt.Sprintf("big=%v", withBig)
		opts := Options{NotBefore: synthNow}
		b.Run(name+"/algo=each", func(b *testing.B) {
			loopCPU(b, func() {
				if _, err := PlanEach(fcs, jobs, opts); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(name+"/algo=first", func(b *testing.B) {
			loopCPU(b, func() {
				in, _ := NewIncremental(Options{})
				if _, _, err := in.Plan(fcs, jobs, synthNow); err != nil {
					b.Fatal(err)
				}
			})
		})
		for _, change := range []string{"time", "site"} {
			b.Run(name+"/after="+change, func(b *testing.B) {
				b.ReportAllocs()
				var cpu time.Duration
				for b.Loop() {
					b.StopTimer()
					in, _ := NewIncremental(Options{})
					if _, _, err := in.Plan(fcs, jobs, synthNow); err != nil {
						b.Fatal(err)
					}
					next := fcs
					if change == "site" {
						next = slices.Clone(fcs)
						f := &next[0]
						f.Slots = slices.DeleteFunc(slices.Clone(f.Slots), func(s forecast.Slot) bool { return s.Node == f.Nodes[0].Name })
					}
					c0 := cputime.Used()
					b.StartTimer()
					if _, _, err := in.Plan(next, jobs, synthNow+1); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					cpu += cputime.Used() - c0
					b.StartTimer()
				}
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

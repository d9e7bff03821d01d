package daemon

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"lookahead/broker"
	"lookahead/forecast"
)

// synthetic builds sites × nodes × 8-proc nodes whose horizon (48 h) is cut
// by local jobs into 4–6 slots per node, with mixed speeds and prices, and
// a queue of jobs of mixed sizes, walltimes and prices.
func synthetic(sites, nodes, jobs int) ([]forecast.Forecast, []forecast.JobRequest) {
	rng := rand.New(rand.NewPCG(7, 11))
	const t0, horizon = 1763780000, 48 * 3600
	fcs := make([]forecast.Forecast, sites)
	for s := range fcs {
		f := forecast.Forecast{Version: 1, Site: fmt.Sprintf("site%02d", s), Seq: 1, Generated: t0, Horizon: t0 + horizon}
		speed := []float64{0.8, 1, 1.2, 1.5}[s%4]
		for n := 0; n < nodes; n++ {
			name := fmt.Sprintf("n%04d", n)
			f.Nodes = append(f.Nodes, forecast.Node{Name: name, Procs: 8, Speed: speed, MemMB: 32000})
			t := int64(t0)
			for t < t0+horizon {
				busy := int64(rng.IntN(6*3600) + 600)
				free := int64(rng.IntN(8*3600) + 1800)
				start, end := t+busy, min(t+busy+free, t0+horizon)
				if start < end {
					f.Slots = append(f.Slots, forecast.Slot{Node: name, Procs: 8 - rng.IntN(3), Start: start, End: end,
						Price: []float64{0.5, 1, 1.5, 2, 3}[rng.IntN(5)]})
				}
				t = end
			}
		}
		fcs[s] = f
	}
	queue := make([]forecast.JobRequest, jobs)
	for i := range queue {
		queue[i] = forecast.JobRequest{ID: fmt.Sprintf("g%d", i+1), Procs: []int{8, 16, 32, 64, 128, 256, 512}[rng.IntN(7)],
			Walltime: int64([]int{1, 2, 4, 8}[rng.IntN(4)] * 3600), MaxPrice: []float64{1, 1.5, 2, 3}[rng.IntN(4)],
			Submitted: int64(t0 - rng.IntN(3600))}
	}
	return fcs, queue
}

// BenchmarkPlanningCycle is one broker planning cycle (holds applied,
// whole queue planned with the co-allocation core) for waiting jobs over
// sites × 200 nodes.
func BenchmarkPlanningCycle(b *testing.B) {
	for _, c := range []struct{ sites, jobs int }{{50, 1000}, {50, 100}, {10, 1000}} {
		fcs, queue := synthetic(c.sites, 200, c.jobs)
		slots := 0
		for _, f := range fcs {
			slots += len(f.Slots)
		}
		in := broker.CycleInput{Now: 1763780000, Forecasts: fcs, Jobs: queue}
		plan := CoallocPlanner(PlannerOptions{})
		b.Run(fmt.Sprintf("sites=%d/nodes=200/slots=%d/jobs=%d", c.sites, slots, c.jobs), func(b *testing.B) {
			placed := 0
			for i := 0; i < b.N; i++ {
				allocs, err := broker.PlanCycle(in, plan)
				if err != nil {
					b.Fatal(err)
				}
				placed = 0
				for _, a := range allocs {
					if a.Placed() {
						placed++
					}
				}
			}
			b.ReportMetric(float64(placed), "placed")
		})
	}
}

package daemon

import (
	"fmt"
	"testing"

	"lookahead/broker"
	"lookahead/broker/coalloc"
	"lookahead/forecast"
)

// BenchmarkPlanningCycleSplit is the planning cycle's cost with the split
// window (planning.split_backlog 2) against without it (the default), in
// the same run: the broker's default criterion and tolerances, a
// multi-site factor of 1.5, 50 sites × 200 nodes and 1,000 waiting jobs;
// algo=first from scratch, after=: a primed planner's next cycle after one
// change (BenchmarkPlanningCycle's). The backlog the window weighs is
// computed every cycle over every slot; the planner keeps its answers
// while the backlog stays within its band.
func BenchmarkPlanningCycleSplit(b *testing.B) {
	fcs, queue := synthetic(50, 200, 1000)
	in := broker.CycleInput{Now: 1763780000, Forecasts: fcs, Jobs: queue}
	b.Run("sites=50/nodes=200/jobs=1000/backlog", func(b *testing.B) {
		var bl int64
		for i := 0; i < b.N; i++ {
			bl = coalloc.Backlog(fcs, queue, in.Now)
		}
		b.ReportMetric(float64(bl), "backlog-s")
	})
	for _, split := range []float64{0, 2} {
		opts := PlannerOptions{MultiSiteFactor: 1.5, Criterion: forecast.FreeFirst, Tolerance: coalloc.DefaultTolerance,
			FreeTolerance: coalloc.DefaultFreeTolerance, SplitBacklog: split}
		name := fmt.Sprintf("sites=50/nodes=200/jobs=1000/split=%g", split)
		b.Run(name+"/algo=first", func(b *testing.B) {
			benchCycle(b, in, func(f []forecast.Forecast, j []forecast.JobRequest, nb int64) ([]forecast.Allocation, error) {
				return NewPlanner(opts).Plan(f, j, nb)
			})
		})
		for _, ch := range []string{"time", "arrive", "commit"} {
			b.Run(name+"/after="+ch, func(b *testing.B) { benchNext(b, in, ch, opts) })
		}
	}
}

package daemon

import (
	"testing"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/internal/cputime"
)

// BenchmarkPlanningCycleParts is the broker's planning cycle after only
// time passed (the incremental planner primed by the cycles before) while
// one site of 50 (× 200 nodes) does not run parts and a tenth of 1,000
// waiting jobs have a script, so every cycle's planning input marks node
// lists (broker.ForParts). parts=uncached is broker.PlanCycle (new lists
// every cycle, which the planner compares node by node: the baseline),
// parts=cached the daemon's broker.PartsCache (the same lists back).
func BenchmarkPlanningCycleParts(b *testing.B) {
	fcs, queue := synthetic(50, 200, 1000)
	no := false
	fcs[0].RunsParts = &no
	scripted := map[string]bool{}
	for i, j := range queue {
		if i%10 == 0 {
			scripted[j.ID] = true
		}
	}
	for _, v := range []struct {
		name string
		plan func(broker.CycleInput, broker.Planner) ([]forecast.Allocation, error)
	}{{"uncached", broker.PlanCycle}, {"cached", new(broker.PartsCache).PlanCycle}} {
		b.Run("sites=50/nodes=200/jobs=1000/after=time/parts="+v.name, func(b *testing.B) {
			in := broker.CycleInput{Now: 1763780000, Forecasts: fcs, Jobs: queue, Scripted: scripted}
			pl := NewPlanner(benchPlanner)
			if _, err := v.plan(in, pl.Plan); err != nil { // priming, not timed
				b.Fatal(err)
			}
			b.ReportAllocs()
			c0 := cputime.Used()
			for b.Loop() {
				in.Now++
				if _, err := v.plan(in, pl.Plan); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Used()-c0)/float64(b.N), "cpu-ns/op")
			st := pl.TakeStats()
			b.ReportMetric(float64(st.Replanned()), "replanned")
		})
	}
}

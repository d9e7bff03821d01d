package coalloc

import (
	"testing"

	"lookahead/forecast"
)

// BenchmarkQueueOrder: a 1,000-job free-first queue over the 100k-slot
// pool whose owners state their own free prices, planned from scratch in
// price order (the broker's default before issue 33's study) and in FCFS
// (the default since), in the same run.
func BenchmarkQueueOrder(b *testing.B) {
	fcs := synthForecasts(100_000, 1)
	for i := range fcs {
		fcs[i].FreePrice = fcs[i].Slots[0].Price
	}
	jobs := synthQueue(1000, 1)
	for _, order := range []string{OrderPrice, OrderFCFS} {
		b.Run("queue/jobs=1000/slots=100k/order="+order, func(b *testing.B) {
			opts := Options{NotBefore: synthNow, MultiSiteFactor: 1.2, Tolerance: DefaultTolerance,
				FreeTolerance: DefaultFreeTolerance, Order: order}
			loopPlan(b, PlanQueue, fcs, jobs, opts)
		})
	}
}

// loopPlan times plan on the queue (loopCPU) and reports how many jobs it
// placed.
func loopPlan(b *testing.B, plan func([]forecast.Forecast, []forecast.JobRequest, Options) ([]forecast.Allocation, error),
	fcs []forecast.Forecast, jobs []forecast.JobRequest, opts Options) {
	var placed int
	loopCPU(b, func() {
		as, err := plan(fcs, jobs, opts)
		if err != nil {
			b.Fatal(err)
		}
		placed = 0
		for _, a := range as {
			if a.Placed() {
				placed++
			}
		}
	})
	b.ReportMetric(float64(placed), "placed")
}

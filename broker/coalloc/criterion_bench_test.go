package coalloc

import (
	"fmt"
	"testing"

	"lookahead/forecast"
)

// BenchmarkPlaceCriterion: one 256-processor job over a 100k-slot pool with
// a multi-site factor, by criterion, in the same run: least-held's and
// free-first's planning cost against earliest-start (the baseline) and
// earliest-finish. Nothing
// is removed, so every iteration plans the same job on the same pool.
func BenchmarkPlaceCriterion(b *testing.B) {
	fcs := synthForecasts(100_000, 1)
	for _, crit := range []string{forecast.EarliestStart, forecast.EarliestFinish, forecast.LeastHeld, forecast.FreeFirst} {
		b.Run(fmt.Sprintf("slots=100k/%s", crit), func(b *testing.B) {
			p, err := NewPool(fcs, Options{NotBefore: synthNow, MultiSiteFactor: 1.2, Tolerance: DefaultTolerance,
				FreeTolerance: DefaultFreeTolerance})
			if err != nil {
				b.Fatal(err)
			}
			job := synthJob()
			job.Criterion = crit
			pl, reason := p.selectJob(job)
			if reason != "" {
				b.Fatal(reason)
			}
			loopCPU(b, func() { p.selectJob(job) })
			b.ReportMetric(float64(pl.end-synthNow)/3600, "end-h")
		})
	}
}

// BenchmarkFreePrice: free-first with each owner's free price (the rule
// since issue 33) against one free price for the grid (the rule before,
// freeGridWide), and cheapest, in the same run, on the synthetic pool
// whose 32 owners state base prices 0.8-2: one 256-processor job
// (PlaceCriterion's), and a 1,000-job queue planned from scratch.
func BenchmarkFreePrice(b *testing.B) {
	fcs, opts := ownerPriced100k()
	rules := []struct {
		name     string
		crit     string
		gridWide bool
	}{{"free-first/grid-wide", forecast.FreeFirst, true}, {"free-first/per-site", forecast.FreeFirst, false}, {"cheapest/per-site", forecast.Cheapest, false}}
	for _, r := range rules {
		b.Run("one-job/slots=100k/"+r.name, func(b *testing.B) {
			freeGridWide = r.gridWide
			defer func() { freeGridWide = false }()
			job := synthJob()
			job.Criterion = r.crit
			_, pl := benchOneJob(b, fcs, opts, job)
			b.ReportMetric(float64(pl.end-synthNow)/3600, "end-h")
		})
	}
	jobs := synthQueue(1000, 1)
	for _, r := range rules {
		b.Run("queue/jobs=1000/slots=100k/"+r.name, func(b *testing.B) {
			freeGridWide = r.gridWide
			defer func() { freeGridWide = false }()
			placed := 0
			for _, a := range benchQueue(b, fcs, withCriterion(jobs, r.crit), opts) {
				if a.Placed() {
					placed++
				}
			}
			b.ReportMetric(float64(placed), "placed")
		})
	}
}

// BenchmarkCheapestLevels: cheapest weighing each sweep's earliest start at
// the price levels it could wait for (since the live check of 2026-11-29)
// against the pass's cut only (the rule before, cheapestOneLevel), in the
// same run, on BenchmarkFreePrice's pool: one 256-processor job without a
// deadline and with one a day after now, and a 1,000-job queue of
// cheapest jobs planned from scratch.
func BenchmarkCheapestLevels(b *testing.B) {
	fcs, opts := ownerPriced100k()
	rules := []struct {
		name     string
		oneLevel bool
	}{{"one-level", true}, {"levels", false}}
	for _, deadline := range []int64{0, synthNow + 86400} {
		for _, r := range rules {
			b.Run(fmt.Sprintf("one-job/slots=100k/deadline=%t/%s", deadline > 0, r.name), func(b *testing.B) {
				cheapestOneLevel = r.oneLevel
				defer func() { cheapestOneLevel = false }()
				job := synthJob()
				job.Criterion, job.Deadline = forecast.Cheapest, deadline
				p, pl := benchOneJob(b, fcs, opts, job)
				b.ReportMetric(p.planCost(job, pl), "cost")
				b.ReportMetric(float64(pl.end-synthNow)/3600, "end-h")
			})
		}
	}
	jobs := synthQueue(1000, 1)
	for _, r := range rules {
		b.Run("queue/jobs=1000/slots=100k/"+r.name, func(b *testing.B) {
			cheapestOneLevel = r.oneLevel
			defer func() { cheapestOneLevel = false }()
			var cost float64
			for _, a := range benchQueue(b, fcs, withCriterion(jobs, forecast.Cheapest), opts) {
				cost += a.Cost
			}
			b.ReportMetric(cost, "cost")
		})
	}
}

// ownerPriced100k is the synthetic 100k-slot pool whose owners state their
// base as their free price (each site's first slot is free time), with the
// options of the criterion benchmarks.
func ownerPriced100k() ([]forecast.Forecast, Options) {
	fcs := synthForecasts(100_000, 1)
	for i := range fcs {
		fcs[i].FreePrice = fcs[i].Slots[0].Price
	}
	return fcs, Options{NotBefore: synthNow, MultiSiteFactor: 1.2, Tolerance: DefaultTolerance, FreeTolerance: DefaultFreeTolerance}
}

// benchOneJob plans job on a pool of fcs again and again (nothing is
// taken), and returns the pool and the plan.
func benchOneJob(b *testing.B, fcs []forecast.Forecast, opts Options, job forecast.JobRequest) (*Pool, plan) {
	b.Helper()
	p, err := NewPool(fcs, opts)
	if err != nil {
		b.Fatal(err)
	}
	pl, reason := p.selectJob(job)
	if reason != "" {
		b.Fatal(reason)
	}
	loopCPU(b, func() { p.selectJob(job) })
	return p, pl
}

// benchQueue plans the queue q on fcs from scratch again and again, and
// returns the last answers.
func benchQueue(b *testing.B, fcs []forecast.Forecast, q []forecast.JobRequest, opts Options) []forecast.Allocation {
	b.Helper()
	var as []forecast.Allocation
	loopCPU(b, func() {
		var err error
		if as, err = PlanQueue(fcs, q, opts); err != nil {
			b.Fatal(err)
		}
	})
	return as
}

// withCriterion is jobs, each with criterion crit.
func withCriterion(jobs []forecast.JobRequest, crit string) []forecast.JobRequest {
	q := make([]forecast.JobRequest, len(jobs))
	for i, j := range jobs {
		j.Criterion = crit
		q[i] = j
	}
	return q
}

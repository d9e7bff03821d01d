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

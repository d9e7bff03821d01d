package coalloc

import (
	"strings"
	"testing"

	"lookahead/forecast"
)

// BenchmarkFreeWindow: free-first's window counted after each cycle's
// earliest finish (each-cycle, the default) against the window since
// submission (since-submit), in the same run, on the owner-priced 100k-slot
// pool: a 1,000-job queue planned from scratch, the jobs submitted 0-12 h
// before now (so some have spent their window and buy local jobs' time).
func BenchmarkFreeWindow(b *testing.B) {
	fcs, opts := ownerPriced100k()
	jobs := withCriterion(synthQueue(1000, 1), forecast.FreeFirst)
	for i := range jobs {
		jobs[i].Submitted = synthNow - int64(i%13)*3600
	}
	for _, w := range []string{FreeWindowEachCycle, FreeWindowSinceSubmit} {
		b.Run("queue/jobs=1000/slots=100k/"+w, func(b *testing.B) {
			o := opts
			o.FreeWindow = w
			placed, bought := 0, 0
			for _, a := range benchQueue(b, fcs, jobs, o) {
				if a.Placed() {
					placed++
				}
				if a.Placed() && !strings.HasPrefix(a.Why, "free-first: free time only") {
					bought++
				}
			}
			b.ReportMetric(float64(placed), "placed")
			b.ReportMetric(float64(bought), "not-free-only")
		})
	}
}

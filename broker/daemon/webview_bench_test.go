package daemon

import (
	"testing"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// webJobs is the queue the web view's benchmarks poll.
const webJobs = 20_000

// BenchmarkWebQueueStatusAll is what the web view's queue tab cost the
// broker per poll before Jobs: every page of the status endpoint (each
// walks and sorts the whole queue again and encodes its jobs as JSON).
func BenchmarkWebQueueStatusAll(b *testing.B) {
	_, r := busyBroker(b, 2, 20, webJobs)
	b.ResetTimer()
	c0 := cpuTime()
	for range b.N {
		if st := r.b.Status(wire.StatusRequest{All: true}); len(st.Jobs) != webJobs {
			b.Fatalf("%d jobs", len(st.Jobs))
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkWebQueueJobs is what it costs with Jobs: one pass, the 500
// shown rendered.
func BenchmarkWebQueueJobs(b *testing.B) {
	_, r := busyBroker(b, 2, 20, webJobs)
	b.ResetTimer()
	c0 := cpuTime()
	for range b.N {
		if jobs, found, total, _ := r.b.Jobs(func(*broker.Job, *forecast.Allocation) bool { return true }, 500); len(jobs) != 500 || found != webJobs || total != webJobs {
			b.Fatalf("%d jobs, %d found, %d held", len(jobs), found, total)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
}

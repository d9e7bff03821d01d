package daemon

import (
	"testing"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/internal/cputime"
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
	c0 := cputime.Used()
	for range b.N {
		if st := r.b.Status(wire.StatusRequest{All: true}); len(st.Jobs) != webJobs {
			b.Fatalf("%d jobs", len(st.Jobs))
		}
	}
	b.ReportMetric(float64(cputime.Used()-c0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkWebQueueJobs is what it costs with Jobs: one pass, the 500
// shown rendered.
func BenchmarkWebQueueJobs(b *testing.B) {
	_, r := busyBroker(b, 2, 20, webJobs)
	b.ResetTimer()
	c0 := cputime.Used()
	for range b.N {
		if jobs, found, total, _ := r.b.Jobs(func(*broker.Job, *forecast.Allocation) bool { return true }, 500); len(jobs) != 500 || found != webJobs || total != webJobs {
			b.Fatalf("%d jobs, %d found, %d held", len(jobs), found, total)
		}
	}
	b.ReportMetric(float64(cputime.Used()-c0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkWebQueueJobsExplained is a poll after a cycle when none of the
// 500 shown is explained yet (the worst poll: ViewExplains explanations
// computed, as `lookahead status JOB` computes one); polls after it in the
// same cycle cost what BenchmarkWebQueueJobs does.
func BenchmarkWebQueueJobsExplained(b *testing.B) {
	_, r := busyBroker(b, 2, 20, webJobs)
	if err := r.b.Cycle(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	c0 := cputime.Used()
	for range b.N {
		r.b.mu.Lock()
		r.b.whys = map[string]string{}
		r.b.mu.Unlock()
		if jobs, _, _, _ := r.b.Jobs(func(*broker.Job, *forecast.Allocation) bool { return true }, 500); len(jobs) != 500 || jobs[0].Plan == nil || jobs[0].Plan.Why == "" {
			b.Fatalf("%d jobs, the first %+v", len(jobs), jobs[0])
		}
	}
	b.ReportMetric(float64(cputime.Used()-c0)/float64(b.N), "cpu-ns/op")
}

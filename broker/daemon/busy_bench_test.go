package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"lookahead/broker/client"
	"lookahead/wire"
)

// A busy grid (issue 15.6): 10,000 jobs in the queue. These benchmarks
// use only what the broker had before the fixes, so the same file
// measures the old and the new code in one run.

const busyJobs = 10_000

// busyBroker starts a broker over sites × nodes synthetic sites and fills
// its queue with n waiting jobs (in process: the durable append, no NATS
// round trip).
func busyBroker(b *testing.B, sites, nodes, n int) (*env, *brokerRun) {
	e := newEnv(b)
	fcs, _ := synthetic(sites, nodes, 0)
	for _, f := range fcs {
		data, err := wire.EncodeForecast(&f)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.kv.Put(context.Background(), f.Site, data); err != nil {
			b.Fatal(err)
		}
	}
	r := e.startBroker(func(c *Config) {
		c.Log = c.Log.Level(zerolog.ErrorLevel)
		c.UsePlanner(NewPlanner(benchPlanner))
		c.StartMargin, c.CommitLead = time.Hour, time.Second // plan everything, reserve nothing
	})
	e.waitSites(r.b, sites)
	for i := range n {
		j := job([]int{8, 16, 32, 64}[i%4], int64(3600*(1+i%4)), float64(1+i%3))
		rep := r.b.Submit(context.Background(), "alice", wire.SubmitRequest{Type: wire.TypeSubmit, RequestID: fmt.Sprintf("busy-%d", i), Job: j})
		if rep.Code != wire.CodeOK {
			b.Fatalf("fill %d: %+v", i, rep)
		}
	}
	return e, r
}

// BenchmarkCycleBusyQueue is one planning cycle of the running broker with
// 10,000 waiting jobs over 10 sites × 100 nodes: settle, snapshot of the
// queue, planning with the co-allocation core, publishing the plan.
func BenchmarkCycleBusyQueue(b *testing.B) {
	_, r := busyBroker(b, 10, 100, busyJobs)
	b.ResetTimer()
	for range b.N {
		if err := r.b.Cycle(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(r.b.Plan().Allocations)), "planned")
}

// BenchmarkStatusBusyQueue renders the whole queue of 10,000 jobs as the
// status endpoint does (in process, every page) and encodes it as JSON.
func BenchmarkStatusBusyQueue(b *testing.B) {
	_, r := busyBroker(b, 2, 20, busyJobs)
	if err := r.b.Cycle(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	bytes := 0
	for range b.N {
		st := r.b.Status(wire.StatusRequest{})
		data, err := json.Marshal(st)
		if err != nil || len(st.Jobs) != busyJobs {
			b.Fatalf("%d jobs, %v", len(st.Jobs), err)
		}
		bytes = len(data)
	}
	b.ReportMetric(float64(bytes), "bytes")
}

// BenchmarkStatusBusyQueueNATS is what `lookahead status` does over NATS
// for a queue of 10,000 jobs: with the old broker the one reply was over
// NATS' 1 MiB and failed.
func BenchmarkStatusBusyQueueNATS(b *testing.B) {
	e, r := busyBroker(b, 2, 20, busyJobs)
	if err := r.b.Cycle(context.Background()); err != nil {
		b.Fatal(err)
	}
	cl := client.New(connect(b, e.srv), "")
	b.ResetTimer()
	for range b.N {
		st, err := cl.Status(context.Background(), "", false)
		if err != nil || len(st.Jobs) != busyJobs {
			b.Fatalf("status over NATS: %d jobs, %v", len(st.Jobs), err)
		}
	}
}

// BenchmarkSubmitRoundTripBusy is BenchmarkSubmitRoundTrip with 10,000
// jobs already queued (admission scans the queue for budgets and limits).
func BenchmarkSubmitRoundTripBusy(b *testing.B) {
	e, _ := busyBroker(b, 1, 10, busyJobs)
	cl := client.New(connect(b, e.srv), "")
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		rep, err := cl.Submit(ctx, job(8, 3600, 1), fmt.Sprintf("bench-%d", i))
		if err != nil || rep.Code != "ok" {
			b.Fatalf("submit: %v %+v", err, rep)
		}
	}
}

// duringCycles runs planning cycles of r's broker back to back, each
// planning its whole queue from scratch (the baseline planner: the worst
// case), until the returned stop is called. A 10,000-job cycle takes
// minutes on the baseline, so stop does not wait for the one under way.
func duringCycles(b *testing.B, r *brokerRun) (stop func()) {
	quit := make(chan struct{})
	var cycles atomic.Int64
	go func() {
		for {
			select {
			case <-quit:
				return
			default:
			}
			if err := r.b.Cycle(context.Background()); err != nil {
				select {
				case <-quit: // the broker is being stopped
				default:
					b.Error(err)
				}
				return
			}
			cycles.Add(1)
		}
	}()
	return func() { // the cycle under way finishes on its own
		close(quit)
		b.ReportMetric(float64(cycles.Load()), "cycles-done")
	}
}

// reportQuantiles reports the 50th and 99th percentile of the samples.
func reportQuantiles(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	q := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

// BenchmarkSubmitDuringCycle: submit round trips over NATS while the
// broker plans a 10,000-job queue over 10 sites × 100 nodes from scratch,
// cycle after cycle (the goal: p99 < 50 ms).
func BenchmarkSubmitDuringCycle(b *testing.B) {
	_, r, cl := busyPlanning(b)
	stop := duringCycles(b, r)
	var took []time.Duration
	b.ResetTimer()
	for i := range max(b.N, 50) {
		t0 := time.Now()
		rep, err := cl.Submit(context.Background(), job(8, 3600, 1), fmt.Sprintf("during-%d", i))
		if err != nil || rep.Code != "ok" {
			b.Fatalf("submit: %v %+v", err, rep)
		}
		took = append(took, time.Since(t0))
	}
	b.StopTimer()
	stop()
	reportQuantiles(b, took)
}

// BenchmarkStatusDuringCycle: `lookahead status` (one job) over NATS
// while the broker plans a 10,000-job queue (goal: < 200 ms).
func BenchmarkStatusDuringCycle(b *testing.B) {
	_, r, cl := busyPlanning(b)
	stop := duringCycles(b, r)
	var took []time.Duration
	b.ResetTimer()
	for range max(b.N, 50) {
		t0 := time.Now()
		if _, err := cl.Status(context.Background(), "g1", false); err != nil {
			b.Fatalf("status: %v", err)
		}
		took = append(took, time.Since(t0))
	}
	b.StopTimer()
	stop()
	reportQuantiles(b, took)
}

// busyPlanning is a broker over 10 sites × 100 nodes with 10,000 jobs
// queued, planning with the baseline planner (every cycle from scratch).
func busyPlanning(b *testing.B) (*env, *brokerRun, *client.Client) {
	e := newEnv(b)
	fcs, queue := synthetic(10, 100, busyJobs)
	for _, f := range fcs {
		data, err := wire.EncodeForecast(&f)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.kv.Put(context.Background(), f.Site, data); err != nil {
			b.Fatal(err)
		}
	}
	r := e.startBroker(func(c *Config) {
		c.Log = c.Log.Level(zerolog.ErrorLevel)
		c.Planner, c.Queue = eachPlanner, NewPlanner(benchPlanner)
		c.Clock = WallClock
		c.StartMargin, c.CommitLead = time.Hour, time.Second // plan everything, reserve nothing
	})
	e.waitSites(r.b, len(fcs))
	for i, j := range queue {
		j.ID, j.User, j.Account = "", "alice", "proj1"
		rep := r.b.Submit(context.Background(), "alice", wire.SubmitRequest{Type: wire.TypeSubmit, RequestID: fmt.Sprintf("busy-%d", i), Job: j})
		if rep.Code != wire.CodeOK {
			b.Fatalf("fill %d: %+v", i, rep)
		}
	}
	return e, r, client.New(connect(b, e.srv), "")
}

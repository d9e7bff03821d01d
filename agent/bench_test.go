package agent_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/wire"
)

// bigSnapshot is a site of nodes 8-processor nodes, 60 % of them running
// one whole-node job each, with queued jobs waiting (1–64 procs, 10 min to
// 12 h walltime, priorities 0–999): the scale of the benchmark.
func bigSnapshot(nodes, queued int, now int64) forecast.Snapshot {
	r := rand.New(rand.NewPCG(7, 7))
	s := forecast.Snapshot{Site: "big", Taken: now}
	for i := range nodes {
		name := fmt.Sprintf("n%04d", i+1)
		s.Nodes = append(s.Nodes, forecast.SnapshotNode{Name: name, Procs: 8, State: []string{forecast.NodeFree}, Speed: 1, MemMB: 32000})
		if i%5 < 3 {
			wall := 600 + r.Int64N(12*3600)
			s.Jobs = append(s.Jobs, forecast.LocalJob{ID: fmt.Sprintf("r%d", i), State: forecast.JobRunning, Procs: 8,
				Walltime: wall, Started: now - r.Int64N(wall), Submitted: now - wall, Hosts: []forecast.HostProcs{{Node: name, Procs: 8}}})
		}
	}
	for i := range queued {
		s.Jobs = append(s.Jobs, forecast.LocalJob{ID: fmt.Sprintf("q%d", i), State: forecast.JobQueued, Procs: 1 + r.IntN(64),
			Walltime: 600 + r.Int64N(12*3600), Submitted: now - int64(queued-i), Priority: r.Int64N(1000)})
	}
	return s
}

// flipSnapshot serves the big snapshot, dropping a different queued job
// on every call, so every forecast differs and is published in full.
type flipSnapshot struct {
	base forecast.Snapshot
	n    atomic.Int64
}

func (f *flipSnapshot) Snapshot(context.Context) (forecast.Snapshot, error) {
	s := f.base
	k := int(f.n.Add(1)) % 100
	jobs := make([]forecast.LocalJob, 0, len(s.Jobs))
	for i, j := range s.Jobs {
		if i != len(s.Jobs)-1-k {
			jobs = append(jobs, j)
		}
	}
	s.Jobs = jobs
	return s, nil
}

func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkEventToPublished measures one event → published forecast on a
// 1,000-node site with 5,000 queued jobs and the built-in engine over a
// 7-day horizon: debounce (1 ms here) + snapshot + forecast + encode + KV
// put + publish, timed from Notify to the message on the site's subject.
// It also reports the encoded size and the process RSS growth at steady
// state (the embedded NATS server was running before the baseline).
func BenchmarkEventToPublished(b *testing.B) {
	nc := startNATS(b)
	now := time.Unix(t0, 0)
	src := &flipSnapshot{base: bigSnapshot(1000, 5000, t0)}
	eng := agent.BuiltinEngine{Horizon: 7 * 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}
	cfg := agent.Config{Site: "big", Debounce: time.Millisecond, Refresh: time.Hour, ForecastTTL: 3 * time.Hour}
	sub, _ := nc.SubscribeSync(wire.ForecastSubject("big"))
	nc.Flush()
	base := vmRSS()
	a, err := agent.New(cfg, agent.Deps{Conn: nc, Snapshotter: src, Engine: eng, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	first := waitMsg(b, sub)
	b.ResetTimer()
	for b.Loop() {
		a.Notify("bench")
		waitMsg(b, sub)
	}
	b.StopTimer()
	b.ReportMetric(float64(len(first.Data)), "bytes/forecast")
	b.ReportMetric(float64(a.Status().Slots), "slots")
	b.ReportMetric(float64(vmRSS()-base)/(1<<20), "rss-growth-MB")
}

func waitMsg(b *testing.B, sub *nats.Subscription) *nats.Msg {
	for {
		m, err := sub.NextMsg(time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if m.Header.Get(wire.HeaderType) == wire.TypeForecast {
			return m
		}
	}
}

// BenchmarkBuildStages splits one cycle of the same site into its stages.
func BenchmarkBuildStages(b *testing.B) {
	snap := bigSnapshot(1000, 5000, t0)
	eng := agent.BuiltinEngine{Horizon: 7 * 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}
	f, _, err := eng.Forecast(context.Background(), snap, time.Unix(t0, 0))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("engine", func(b *testing.B) {
		for b.Loop() {
			eng.Forecast(context.Background(), snap, time.Unix(t0, 0))
		}
	})
	b.Run("fingerprint", func(b *testing.B) {
		for b.Loop() {
			agent.Fingerprint(&f)
		}
	})
	b.Run("encode", func(b *testing.B) {
		var n int
		for b.Loop() {
			data, _ := wire.EncodeForecast(&f)
			n = len(data)
		}
		b.ReportMetric(float64(n), "bytes")
		b.ReportMetric(float64(len(f.Slots)), "slots")
	})
}

// BenchmarkEncodedSize5000Nodes encodes a forecast the built-in engine
// made for a 5,000-node site (8 procs each, 60 % busy, 20,000 queued jobs).
func BenchmarkEncodedSize5000Nodes(b *testing.B) {
	snap := bigSnapshot(5000, 20000, t0)
	eng := agent.BuiltinEngine{Horizon: 7 * 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}
	f, _, err := eng.Forecast(context.Background(), snap, time.Unix(t0, 0))
	if err != nil {
		b.Fatal(err)
	}
	var n int
	for b.Loop() {
		data, err := wire.EncodeForecast(&f)
		if err != nil {
			b.Fatal(err)
		}
		n = len(data)
	}
	b.ReportMetric(float64(n), "bytes")
	b.ReportMetric(float64(len(f.Slots)), "slots")
	b.ReportMetric(float64(len(f.Slots))/5000, "slots/node")
}

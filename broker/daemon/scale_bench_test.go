package daemon

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/internal/cputime"
	"lookahead/wire"
)

// The national grid of issue 39: 100 sites × 500 nodes (8 processors
// each, 7-day horizons) and 100,000 queued jobs. Goals: a cycle from
// scratch ≤ 10 s, one arrival ≤ 50 ms, time passing only ≤ 10 ms, and
// the intake of 100 sites' forecasts every 60 s ≤ 5 % of one core (so
// ≤ 30 ms of CPU per 500-node forecast). The figures are in
// docs/broker.md ("Scale"). Runs only with LOOKAHEAD_BENCH_SCALE=1 (a
// cycle from scratch takes tens of seconds of CPU, the priming before
// every incremental one as much again).

// scaleHorizon is the forecasts' horizon: 7 days.
const scaleHorizon = 7 * 24 * 3600

// scaleSites, scaleNodes and scaleJobs are the grid of the goals.
const (
	scaleSites = 100
	scaleNodes = 500
	scaleJobs  = 100_000
)

func skipUnlessScale(b *testing.B) {
	if os.Getenv("LOOKAHEAD_BENCH_SCALE") == "" {
		b.Skip("set LOOKAHEAD_BENCH_SCALE=1 (minutes of CPU)")
	}
}

// syntheticOver is synthetic with the given horizon (seconds).
func syntheticOver(sites, nodes, jobs int, horizon int64) ([]forecast.Forecast, []forecast.JobRequest) {
	rng := rand.New(rand.NewPCG(7, 11))
	const t0 = 1763780000
	fcs := make([]forecast.Forecast, sites)
	for s := range fcs {
		fcs[s] = syntheticSite(rng, fmt.Sprintf("site%03d", s), s, nodes, t0, horizon)
	}
	return fcs, syntheticQueue(rng, jobs, t0)
}

// syntheticSite is one site as synthetic draws it: nodes of 8 processors
// whose horizon is cut by local jobs into free slots of mixed prices.
func syntheticSite(rng *rand.Rand, name string, s, nodes int, t0, horizon int64) forecast.Forecast {
	f := forecast.Forecast{Version: 1, Site: name, Seq: 1, Generated: t0, Horizon: t0 + horizon}
	speed := []float64{0.8, 1, 1.2, 1.5}[s%4]
	for n := 0; n < nodes; n++ {
		node := fmt.Sprintf("n%04d", n)
		f.Nodes = append(f.Nodes, forecast.Node{Name: node, Procs: 8, Speed: speed, MemMB: 32000})
		for t := t0; t < t0+horizon; {
			busy := int64(rng.IntN(6*3600) + 600)
			free := int64(rng.IntN(8*3600) + 1800)
			start, end := t+busy, min(t+busy+free, t0+horizon)
			if start < end {
				f.Slots = append(f.Slots, forecast.Slot{Node: node, Procs: 8 - rng.IntN(3), Start: start, End: end,
					Price: []float64{0.5, 1, 1.5, 2, 3}[rng.IntN(5)]})
			}
			t = end
		}
	}
	return f
}

func syntheticQueue(rng *rand.Rand, jobs int, t0 int64) []forecast.JobRequest {
	queue := make([]forecast.JobRequest, jobs)
	for i := range queue {
		queue[i] = forecast.JobRequest{ID: fmt.Sprintf("g%d", i+1), Procs: []int{8, 16, 32, 64, 128, 256, 512}[rng.IntN(7)],
			Walltime: int64([]int{1, 2, 4, 8}[rng.IntN(4)] * 3600), MaxPrice: []float64{1, 1.5, 2, 3}[rng.IntN(4)],
			Submitted: t0 - int64(rng.IntN(3600))}
	}
	return queue
}

// BenchmarkScaleCycle is the broker's planning at the goals' scale: the
// first cycle (from scratch; runs=coarse: over the run index before
// issue 39's finer one, see benchFirst) and the cycle after one arrival or after
// time passed only (one second), on a planner primed with the cycle
// before (untimed). It reports CPU time per cycle and the process's peak
// resident set after it.
func BenchmarkScaleCycle(b *testing.B) {
	skipUnlessScale(b)
	fcs, queue := syntheticOver(scaleSites, scaleNodes, scaleJobs, scaleHorizon)
	slots := 0
	for _, f := range fcs {
		slots += len(f.Slots)
	}
	in := broker.CycleInput{Now: 1763780000, Forecasts: fcs, Jobs: queue}
	name := fmt.Sprintf("sites=%d/nodes=%d/slots=%d/jobs=%d", scaleSites, scaleNodes, slots, scaleJobs)
	b.Run(name+"/algo=first", func(b *testing.B) {
		benchCycle(b, in, func(f []forecast.Forecast, j []forecast.JobRequest, nb int64) ([]forecast.Allocation, error) {
			return NewPlanner(benchPlanner).Plan(f, j, nb)
		})
		b.ReportMetric(float64(peakRSS())/1024, "peak-rss-MB")
	})
	b.Run(name+"/algo=first/runs=coarse", func(b *testing.B) { benchFirst(b, in, true) })
	for _, ch := range []string{"time", "arrive"} {
		b.Run(name+"/after="+ch, func(b *testing.B) { benchNext(b, in, ch, benchPlanner) })
	}
}

// BenchmarkScaleIntake is what the broker does with one 500-node site's
// forecast (7 days, about 11,500 slots) when it arrives: decode it,
// check it against the planner's limits, clip it to its window and take
// it as the site's (and the SHA-256 digest of the payload). 100 sites every 60 s within 5 % of one core leaves
// 30 ms of CPU per forecast.
func BenchmarkScaleIntake(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 11))
	f := syntheticSite(rng, "site000", 0, scaleNodes, 1763780000, scaleHorizon)
	data, err := wire.EncodeForecast(&f)
	if err != nil {
		b.Fatal(err)
	}
	c0 := cputime.Used()
	for b.Loop() {
		_ = sha256.Sum256(data) // the broker's digest of every payload
		got, _, err := decodeSiteForecast("site000", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, v := broker.TakeForecast(nil, "site000", got, got.Generated, 60); v != broker.Taken {
			b.Fatalf("not taken: %v", v)
		}
	}
	b.ReportMetric(float64(cputime.Used()-c0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(len(data)), "bytes")
	b.ReportMetric(float64(len(f.Slots)), "slots")
}

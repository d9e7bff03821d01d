package replay

import (
	"compress/gzip"
	"fmt"
	"os"
	"testing"

	"lookahead/internal/cputime"
)

// BenchmarkReplayCTC replays the whole CTC-SP2 trace (77,222 jobs) on three
// sites that together have CTC's 338 processors (192/96/50, so the offered
// load stays the trace's own ~0.84; widths clamped to the largest site for
// local jobs), 10% of the jobs going to the grid, lookahead strategy, end to
// end. It reads the trace from ../../shared/traces (or
// $LOOKAHEAD_TRACES) and skips when it is not there. Run briefly:
//
//	go test -run '^$' -bench ReplayCTC -benchtime 1x ./replay/
func BenchmarkReplayCTC(b *testing.B) {
	dir := os.Getenv("LOOKAHEAD_TRACES")
	if dir == "" {
		dir = "../../shared/traces"
	}
	f, err := os.Open(dir + "/CTC-SP2-1996-3.1-cln.swf.gz")
	if err != nil {
		b.Skipf("CTC trace not available: %v", err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	jobs, _, err := ReadSWF(gz)
	if err != nil {
		b.Fatal(err)
	}
	in := Inputs{Traces: map[string][]TraceJob{"ctc": jobs}}
	sc := seed002(0)
	sc.Sites = []SiteSpec{{Name: "a", Nodes: 192}, {Name: "b", Nodes: 96}, {Name: "c", Nodes: 50}}
	sc.Local.MaxWidth = 192
	sc.Grid.Share, sc.Grid.Redraw, sc.Grid.MaxWidth = 0.1, nil, 0
	sc.Local.TimeScale = 1
	if n := os.Getenv("LOOKAHEAD_BENCH_JOBS"); n != "" { // a shorter prefix, for a quick look
		fmt.Sscan(n, &sc.Local.Jobs)
	}
	sc = sc.WithDefaults()
	w, err := BuildWorkload(sc, in)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := RunOnce(sc, w, NameLookahead, nil, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Stats.Events)/b.Elapsed().Seconds(), "events/s")
		b.ReportMetric(float64(res.Stats.Events), "events")
		if res.Checks.Count > 0 {
			b.Fatalf("violations: %v", res.Checks.Violations)
		}
	}
}

// BenchmarkSeed002Point replays one point of seed 002's study (Workload 2,
// heterogeneity 1.4/1/0.6, factor 1.3, FCFS; LOOKAHEAD_BENCH_JOBS jobs of
// the CTC slice, default 400) under each of the study's strategies, planning
// every cycle from scratch (path=rebuild, the algorithm before the replay
// kept anything: the baseline) and keeping what is exact (path=kept). Run:
//
//	go test -run '^$' -bench Seed002Point -benchtime 1x ./replay/
func BenchmarkSeed002Point(b *testing.B) {
	jobs := 400
	if n := os.Getenv("LOOKAHEAD_BENCH_JOBS"); n != "" {
		fmt.Sscan(n, &jobs)
	}
	sc := seed002(jobs)
	sc.Broker.MultiSiteFactor = 1.3
	sc.Broker.Order = OrderFCFS
	for i, h := range []float64{1.4, 1, 0.6} {
		sc.Sites[i].Heterogeneity, sc.Sites[i].Speed = h, 1/h
	}
	sc = sc.WithDefaults()
	w, err := BuildWorkload(sc, Inputs{Traces: map[string][]TraceJob{"ctc": ctcSlice(b)}})
	if err != nil {
		b.Fatal(err)
	}
	for _, pol := range []string{NameSingleSite, NameGreedy, NameLookahead} {
		for _, path := range []string{"rebuild", "kept"} {
			b.Run("policy="+pol+"/path="+path, func(b *testing.B) {
				cpu0 := cputime.Used()
				for b.Loop() {
					if _, err := RunOnce(sc, w, pol, nil, Options{Rebuild: path == "rebuild"}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cputime.Used()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

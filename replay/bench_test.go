package replay

import (
	"compress/gzip"
	"fmt"
	"os"
	"testing"
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

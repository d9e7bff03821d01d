package replay

import (
	"compress/gzip"
	"os"
	"testing"
)

// BenchmarkReplayCTC replays the whole CTC-SP2 trace (77,222 jobs) on seed
// 002's three sites with 10% of the jobs going to the grid, lookahead
// strategy, end to end. It reads the trace from ../../shared/traces (or
// $LOOKAHEAD_TRACES) and skips when it is not there. Run briefly:
//
//	go test -run '^$' -bench ReplayCTC -benchtime 1x ./replay/
func BenchmarkReplayCTC(b *testing.B) {
	dir := os.Getenv("LOOKAHEAD_TRACES")
	if dir == "" {
		dir = "../../../shared/traces"
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
	sc.Grid.Share, sc.Grid.Redraw = 0.1, nil
	sc.Local.TimeScale = 1
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

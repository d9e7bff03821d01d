package daemon

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"

	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/wire"
)

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// FuzzIntakeThenPlan: whatever the broker's intake takes (bounded decode,
// the planner's limits) the planner takes too, and every allocation it
// returns can be written as JSON. Issue 15.1: one site's forecast stopped
// planning for the whole grid.
func FuzzIntakeThenPlan(f *testing.F) {
	if data, err := os.ReadFile("testdata/forecast-alpha.json"); err == nil {
		f.Add(data)
	}
	seed := forecast.Forecast{Version: 1, Site: "alpha", Seq: 3, Generated: 1000, Horizon: 90000,
		Nodes: []forecast.Node{{Name: "n1", Procs: 8, Speed: 1}, {Name: "n2", Procs: 4, Speed: 0.5, Features: []string{"gpu"}}},
		Slots: []forecast.Slot{{Node: "n1", Procs: 8, Start: 1000, End: 5000, Price: 1}, {Node: "n1", Procs: 4, Start: 5000, End: 9000, Price: 2},
			{Node: "n2", Procs: 4, Start: 2000, End: 80000, Price: 1e300}}}
	if data, err := wire.EncodeForecast(&seed); err == nil {
		var raw bytes.Buffer
		zr, _ := gzip.NewReader(bytes.NewReader(data))
		raw.ReadFrom(zr)
		f.Add(raw.Bytes())
	}
	if data, err := json.Marshal(seed); err == nil {
		f.Add(data)
	}
	jobs := []forecast.JobRequest{
		{ID: "g1", Procs: 8, Walltime: 3600, MaxPrice: 1e308},
		{ID: "g2", Procs: 2, Walltime: 600, MaxPrice: 2, Features: []string{"gpu"}},
		{ID: "g3", Procs: 1 << 20, Walltime: 1 << 30, MaxPrice: 5},
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fc, err := wire.DecodeForecast(gzipped(raw))
		if err != nil {
			return
		}
		if coalloc.ValidateForecast(fc) != nil {
			return
		}
		allocs, err := coalloc.PlanQueue([]forecast.Forecast{*fc}, jobs, coalloc.Options{NotBefore: fc.Generated})
		if err != nil {
			t.Fatalf("intake took a forecast the planner refuses: %v", err)
		}
		if _, err := json.Marshal(allocs); err != nil {
			t.Fatalf("plan not writable as JSON: %v", err)
		}
	})
}

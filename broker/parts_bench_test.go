package broker

import (
	"fmt"
	"slices"
	"testing"

	"lookahead/forecast"
	"lookahead/internal/cputime"
)

// BenchmarkForParts is what keeping jobs with a script on the sites that
// run parts adds to a cycle at 100 sites of 500 nodes and 10,000 waiting
// jobs: nothing while every site runs parts (all-run-parts), a copy of
// every node once some site does not and a job with a script waits
// (one-site-off). uncached is ForParts itself (every cycle marks every
// list: the baseline), cached the broker's PartsCache over the same
// forecasts cycle after cycle, and cached/new-revision the cache when
// each cycle one site (in turn) has a new forecast with a new node list.
func BenchmarkForParts(b *testing.B) {
	no := false
	fcs := make([]forecast.Forecast, 100)
	for i := range fcs {
		f := forecast.Forecast{Site: fmt.Sprintf("s%03d", i)}
		for n := range 500 {
			f.Nodes = append(f.Nodes, forecast.Node{Name: fmt.Sprintf("n%d", n), Procs: 8, Speed: 1})
		}
		fcs[i] = f
	}
	jobs := make([]forecast.JobRequest, 10_000)
	scripted := map[string]bool{}
	for i := range jobs {
		jobs[i] = forecast.JobRequest{ID: fmt.Sprintf("g%d", i)}
		if i%10 == 0 {
			scripted[jobs[i].ID] = true
		}
	}
	run := func(b *testing.B, fcs []forecast.Forecast, forParts partsRule) {
		b.ReportAllocs()
		forParts(fcs, jobs, scripted) // a cache's first cycle, not timed
		c0 := cputime.Used()
		for b.Loop() {
			forParts(fcs, jobs, scripted)
		}
		b.ReportMetric(float64(cputime.Used()-c0)/float64(b.N), "cpu-ns/op")
	}
	off := append([]forecast.Forecast(nil), fcs...)
	off[0].RunsParts = &no
	for _, in := range []struct {
		name string
		fcs  []forecast.Forecast
	}{{"all-run-parts", fcs}, {"one-site-off", off}} {
		b.Run(in.name+"/uncached", func(b *testing.B) { run(b, in.fcs, ForParts) })
		b.Run(in.name+"/cached", func(b *testing.B) {
			var c PartsCache
			run(b, in.fcs, c.ForParts)
		})
	}
	b.Run("one-site-off/cached/new-revision", func(b *testing.B) {
		var c PartsCache
		fcs := slices.Clone(off)
		again := make([][]forecast.Node, len(fcs)) // each site's other node list, as decoded again
		for i := range fcs {
			again[i] = slices.Clone(fcs[i].Nodes)
		}
		turn := 0
		run(b, fcs, func(fcs []forecast.Forecast, jobs []forecast.JobRequest, scripted map[string]bool) ([]forecast.Forecast, []forecast.JobRequest, []string) {
			k := turn % len(fcs)
			turn++
			fcs[k].Seq++
			fcs[k].Nodes, again[k] = again[k], fcs[k].Nodes
			return c.ForParts(fcs, jobs, scripted)
		})
	})
}

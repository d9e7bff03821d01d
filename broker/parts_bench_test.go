package broker

import (
	"fmt"
	"testing"

	"lookahead/forecast"
)

// BenchmarkForParts is what keeping jobs with a script on the sites that
// run parts adds to a cycle at 100 sites of 500 nodes and 10,000 waiting
// jobs: nothing while every site runs parts (baseline), a copy of every
// node once some site does not and a job with a script waits.
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
	run := func(b *testing.B, fcs []forecast.Forecast) {
		b.ReportAllocs()
		for b.Loop() {
			ForParts(fcs, jobs, scripted)
		}
	}
	b.Run("all-run-parts", func(b *testing.B) { run(b, fcs) })
	off := append([]forecast.Forecast(nil), fcs...)
	off[0].RunsParts = &no
	b.Run("one-site-off", func(b *testing.B) { run(b, off) })
}

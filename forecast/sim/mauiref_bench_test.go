package sim

import (
	"testing"

	"lookahead/internal/cputime"
)

// BenchmarkMauiReference replays every reference schedule of Maui 3.3.1
// (testdata/mauiref) under its own maui.cfg: node-level replays with
// reservation depths, the workload that runs Maui's range code
// (buildRanges, mergeRanges), unlike the pool-mode trace replays.
func BenchmarkMauiReference(b *testing.B) {
	type ref struct {
		c refCase
		p Policy
	}
	var refs []ref
	for _, dir := range refDirs(b) {
		c := loadRefCase(b, dir)
		p, err := c.policy()
		if err != nil {
			b.Fatal(err)
		}
		refs = append(refs, ref{c, p})
	}
	b.ResetTimer()
	cpu0 := cputime.Used()
	for b.Loop() {
		for _, r := range refs {
			if _, err := RunWith(r.c.cluster, r.c.jobs, r.p, Options{KeepHosts: true}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric((cputime.Used()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
}

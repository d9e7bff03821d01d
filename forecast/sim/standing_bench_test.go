package sim

import (
	"path/filepath"
	"testing"

	"lookahead/internal/cputime"
)

// benchFeatureCost replays the named reference schedules with their
// maui.cfg (with) and with strip applied to each policy (without): the
// cost of following a feature, as the CPU ratio of the two in one run
// (the schedules differ, so it is the cost of the other schedule as much
// as of the feature's checks).
func benchFeatureCost(b *testing.B, names []string, strip func(*Policy)) {
	var cases []refCase
	var with, without []Policy
	for _, name := range names {
		c := loadRefCase(b, filepath.Join("testdata", "mauiref", name))
		p, err := c.policy()
		if err != nil {
			b.Fatal(err)
		}
		q := p
		strip(&q)
		cases, with, without = append(cases, c), append(with, p), append(without, q)
	}
	for _, v := range []struct {
		name string
		ps   []Policy
	}{{"without", without}, {"with", with}} {
		b.Run(v.name, func(b *testing.B) {
			cpu0 := cputime.Used()
			for b.Loop() {
				for k, c := range cases {
					if _, err := RunWith(c.cluster, c.jobs, v.ps[k], Options{KeepHosts: true}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric((cputime.Used()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkStandingQOSCost: standing reservations and QOS (Policy.Standing
// and Policy.QOS unset without them).
func BenchmarkStandingQOSCost(b *testing.B) {
	benchFeatureCost(b, []string{"srday", "srweek", "srqos", "srheld", "qos"}, func(p *Policy) { p.Standing, p.QOS = nil, nil })
}

// BenchmarkPartitionCost: partitions (ignored without them).
func BenchmarkPartitionCost(b *testing.B) {
	benchFeatureCost(b, []string{"partition", "partheld"}, func(p *Policy) { p.Nodes = nil })
}

// BenchmarkNodePolicyCost: NODECFG node policies (ignored without them).
func BenchmarkNodePolicyCost(b *testing.B) {
	benchFeatureCost(b, []string{"nodemaxjob", "nodemaxheld"}, func(p *Policy) { p.Nodes = nil })
}

package sim

import (
	"path/filepath"
	"testing"
)

// BenchmarkStandingQOSCost replays the standing-reservation and QOS
// reference schedules with their maui.cfg (with) and with Policy.Standing
// and Policy.QOS unset (without): the cost of following them, as the
// CPU ratio of the two in one run.
func BenchmarkStandingQOSCost(b *testing.B) {
	var cases []refCase
	var with, without []Policy
	for _, name := range []string{"srday", "srweek", "srqos", "srheld", "qos"} {
		c := loadRefCase(b, filepath.Join("testdata", "mauiref", name))
		p, err := refPolicy(c.cfg)
		if err != nil {
			b.Fatal(err)
		}
		q := p
		q.Standing, q.QOS = nil, nil
		cases, with, without = append(cases, c), append(with, p), append(without, q)
	}
	for _, v := range []struct {
		name string
		ps   []Policy
	}{{"without", without}, {"with", with}} {
		b.Run(v.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				for k, c := range cases {
					if _, err := RunWith(c.cluster, c.jobs, v.ps[k], Options{KeepHosts: true}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
		})
	}
}

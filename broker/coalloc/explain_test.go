package coalloc

import (
	"strings"
	"testing"

	"lookahead/forecast"
)

// Explain names what was short and what would help, with numbers.
func TestExplain(t *testing.T) {
	fcs := []forecast.Forecast{
		mkSite("a", []forecast.Node{nd("n1", 4, 1), nd("n2", 4, 1)},
			sl("n1", 4, 0, 36000, 1), sl("n2", 2, 0, 7200, 1), sl("n2", 2, 0, 36000, 2)),
		mkSite("b", []forecast.Node{nd("m1", 2, 2)}, sl("m1", 2, 0, 36000, 1)),
	}
	fcs[0].Horizon, fcs[1].Horizon = 36000, 36000
	cases := []struct {
		name string
		job  forecast.JobRequest
		want []string
	}{
		{"processors at the price", jb("j", 8, 3*3600, 1),
			[]string{"at most 6 of its 8 processors are free together for its walltime of 3h", "its 8 processors are free together for at most 2h", "max_price 2 would fit"}},
		{"walltime past the forecasts", jb("j", 1, 80000, 1),
			[]string{"walltime 22h13m20s is longer than the forecasts reach: at most 20h fits, on b"}},
		{"one site", func() forecast.JobRequest { j := jb("j", 10, 3600, 2); j.MaxSites = 1; return j }(),
			[]string{"at most 8 of its 10 processors", "on at most 1 site(s)", "more sites (max_sites) would fit"}},
		{"requirements", func() forecast.JobRequest { j := jb("j", 1, 60, 1); j.MinSpeed = 3; return j }(),
			[]string{"min_speed 3: the fastest node has 2"}},
		{"fits alone", jb("j", 2, 60, 1), []string{"would start in 0s on b: the jobs planned before it"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Explain(fcs, c.job, Options{})
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("Explain = %q\nwant it to contain %q", got, w)
				}
			}
		})
	}
}

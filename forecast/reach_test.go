package forecast

import (
	"math"
	"testing"
)

// EverFits: a job fits if some speed's nodes on few enough sites that
// reach far enough could hold it; the hold grows with the multi-site factor.
func TestEverFits(t *testing.T) {
	sites := []SiteReach{
		{Name: "big", Span: 48 * 3600, Procs: map[float64]int{1: 128}},
		{Name: "fast", Span: 48 * 3600, Procs: map[float64]int{1.5: 64, 1: 16}},
		{Name: "short", Span: 10 * 3600, Procs: map[float64]int{2: 32}},
	}
	// the planner's Duration with a multi-site factor of 1.2
	hold := func(w int64, speed float64, m int) int64 {
		f := float64(w) / speed
		if m > 1 {
			f *= 1.2
		}
		return int64(math.Ceil(f))
	}
	cases := []struct {
		name     string
		procs    int
		walltime int64
		maxSites int
		want     bool
	}{
		{"one site, at speed 1", 128, 48 * 3600, 0, true},
		{"past every span at speed 1, fits the fast nodes", 64, 72 * 3600, 0, true},
		{"past every span at speed 1.5", 64, 72*3600 + 1, 0, false},
		{"wider than one site: two, with the factor", 200, 40 * 3600, 0, true},
		{"two sites: the factor takes the hold past 48 h", 200, 41 * 3600, 0, false},
		{"wider than one site, max_sites 1", 200, 3600, 1, false},
		{"the short site's fast nodes, within its span", 32, 20 * 3600, 0, true},
		{"the short site's fast nodes, past its span", 32, 20*3600 + 2, 1, true}, // on big at speed 1
		{"wider than everything", 241, 60, 0, false},
	}
	for _, c := range cases {
		if got := EverFits(sites, c.procs, c.walltime, c.maxSites, hold); got != c.want {
			t.Errorf("%s: EverFits(%d procs, %d s, max_sites %d) = %v, want %v", c.name, c.procs, c.walltime, c.maxSites, got, c.want)
		}
	}
}

package forecast

import (
	"slices"
)

// SiteReach is what one site could ever hold, whatever its forecasts
// offer: how far ahead they reach (Span, seconds) and its processors by
// node speed.
type SiteReach struct {
	Name  string
	Span  int64
	Procs map[float64]int // processors of the site's nodes of each speed
}

// EverFits reports whether some allocation of procs processors on at most
// maxSites (0: any) of the sites could hold walltime inside their spans,
// were every node of theirs free, hold(walltime, slowest speed, sites)
// being how long an allocation holds (the planner's coalloc
// Options.Duration, with its multi-site factor and staging): for some speed s, the nodes at least s fast of the
// fewest sites that have enough of them, each of those sites reaching as
// far as the hold. A job for which it is false waits for ever: no forecast
// of these sites can place it.
func EverFits(sites []SiteReach, procs int, walltime int64, maxSites int, hold func(walltime int64, slowest float64, sites int) int64) bool {
	if maxSites <= 0 || maxSites > len(sites) {
		maxSites = len(sites)
	}
	var speeds []float64
	for _, s := range sites {
		for v := range s.Procs {
			speeds = append(speeds, v)
		}
	}
	slices.Sort(speeds)
	speeds = slices.Compact(speeds)
	for _, v := range speeds {
		for m := 1; m <= maxSites; m++ {
			h := hold(walltime, v, m)
			var caps []int
			for _, s := range sites {
				if s.Span < h {
					continue
				}
				c := 0
				for sp, n := range s.Procs {
					if sp >= v {
						c += n
					}
				}
				caps = append(caps, c)
			}
			slices.Sort(caps)
			slices.Reverse(caps)
			sum := 0
			for _, c := range caps[:min(m, len(caps))] {
				sum += c
			}
			if sum >= procs {
				return true
			}
		}
	}
	return false
}

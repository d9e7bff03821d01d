package replay

import "lookahead/forecast"

// The per-class breakdown of the grid stream: each grid job by width
// against the sites (does it fit the smallest site, the largest, or no
// single site) and by run time on the reference CPU (the shorter of its run
// and its walltime), so that a study can say which jobs carry a broker's
// gain or loss of AWRT.

// Width and run-time classes.
const (
	WidthNarrow = "narrow" // fits the smallest site
	WidthMid    = "mid"    // fits the largest site, not the smallest
	WidthWide   = "wide"   // wider than any site
	RunShort    = "<1h"
	RunMedium   = "1-6h"
	RunLong     = ">6h"
)

// ClassMetrics is one class's share of a run's grid AWRT: AWRT = Σ over
// classes of WorkResponse / the stream's Work.
type ClassMetrics struct {
	Width string `json:"width"`
	Run   string `json:"run"`
	Jobs  int    `json:"jobs"`
	// Work is Σ processors × held time (s), AWRT's weight; WorkResponse is
	// Σ weight × response time.
	Work         float64 `json:"work"`
	WorkResponse float64 `json:"work_response"`
}

// AWRT is the class's own work-weighted response time.
func (c ClassMetrics) AWRT() float64 {
	if c.Work == 0 {
		return 0
	}
	return c.WorkResponse / c.Work
}

// Classes lists the classes in a fixed order (width, then run time).
func Classes() [][2]string {
	var out [][2]string
	for _, w := range []string{WidthNarrow, WidthMid, WidthWide} {
		for _, r := range []string{RunShort, RunMedium, RunLong} {
			out = append(out, [2]string{w, r})
		}
	}
	return out
}

// classOf is a grid job's class in a grid of these sites.
func classOf(job GridJob, sites []SiteSpec) [2]string {
	smallest, largest := 0, 0
	for i, s := range sites {
		p := s.Nodes * s.PPN
		if i == 0 || p < smallest {
			smallest = p
		}
		largest = max(largest, p)
	}
	w := WidthWide
	switch {
	case job.Req.Procs <= smallest:
		w = WidthNarrow
	case job.Req.Procs <= largest:
		w = WidthMid
	}
	run := min(job.Run, job.Req.Walltime)
	r := RunLong
	switch {
	case run < 3600:
		r = RunShort
	case run <= 6*3600:
		r = RunMedium
	}
	return [2]string{w, r}
}

// gridClasses sums the grid records by class (every class listed, in
// Classes order).
func gridClasses(sites []SiteSpec, grid []GridJob, recs []JobRecord) []ClassMetrics {
	of := make(map[string][2]string, len(grid))
	for _, j := range grid {
		of[j.Req.ID] = classOf(j, sites)
	}
	idx := map[[2]string]int{}
	out := make([]ClassMetrics, 0, 9)
	for i, c := range Classes() {
		idx[c] = i
		out = append(out, ClassMetrics{Width: c[0], Run: c[1]})
	}
	for _, r := range recs {
		c, ok := of[r.ID]
		if !r.Grid || !ok {
			continue
		}
		m := &out[idx[c]]
		w := float64(r.Procs()) * float64(r.End-r.Start)
		m.Jobs++
		m.Work += w
		m.WorkResponse += w * float64(r.End-r.Submit)
	}
	return out
}

// NeverFits reports whether no forecast of the scenario's sites could
// ever hold a grid job: no set of sites reaching as far as the forecast
// horizon has enough processors at any speed for its walltime (the
// forecast.EverFits with the co-allocation core's Duration, the multi-site factor and staging
// counted). The broker refuses such a job at submit, and so does the
// replay.
func NeverFits(sc Scenario, job GridJob) bool {
	reach := make([]forecast.SiteReach, len(sc.Sites))
	for i, s := range sc.Sites {
		reach[i] = forecast.SiteReach{Name: s.Name, Span: sc.Forecast.Horizon.Seconds(), Procs: map[float64]int{s.Speed: s.Nodes * s.PPN}}
	}
	return !forecast.EverFits(reach, job.Req.Procs, job.Req.Walltime, job.Req.MaxSites, coallocOptions(sc).Duration)
}

package replay

import (
	"sort"

	"lookahead/forecast"
)

// JobRecord is one job that ran in a replay: where, when, and what it paid.
// A local job has one part; a grid job one per site it used. Start and End
// are when its processors were held (a grid job's staging included).
type JobRecord struct {
	ID     string    `json:"id"`
	Grid   bool      `json:"grid,omitempty"`
	Parts  []SiteUse `json:"parts"`
	Submit int64     `json:"submit"`
	Start  int64     `json:"start"`
	End    int64     `json:"end"`
	// Reserved is the end of a grid job's reservation (End ≤ Reserved).
	Reserved int64 `json:"reserved,omitempty"`
	// Credits is what a grid job paid: the share of its reservation's cost
	// (Committed) for the time it held (forecast.Charged).
	Credits   float64 `json:"credits,omitempty"`
	Committed float64 `json:"committed,omitempty"`
}

// SiteUse is what a job held on one site (by index in the scenario's
// sites): processors per node, from Start.
type SiteUse struct {
	Site  int                  `json:"site"`
	Procs int                  `json:"procs"`
	Start int64                `json:"start"`
	Hosts []forecast.HostProcs `json:"hosts"`
	// Credits is what the grid job paid this site's owner: its parts'
	// cost, for the share of the reservation the job held.
	Credits float64 `json:"credits,omitempty"`
}

// Procs is the job's width over all its parts.
func (r JobRecord) Procs() int {
	n := 0
	for _, p := range r.Parts {
		n += p.Procs
	}
	return n
}

// StreamMetrics summarise one stream (grid or local) of a run. Weighted
// means use processors × run time as the weight (seed 002's AWRT/AWWT).
type StreamMetrics struct {
	Jobs     int     `json:"jobs"`
	AWRT     float64 `json:"awrt"`
	AWWT     float64 `json:"awwt"`
	MeanWait float64 `json:"mean_wait"`
	MeanBSLD float64 `json:"mean_bounded_slowdown"`
	Work     float64 `json:"work"` // processor-seconds
}

// BSLDTau is the bound of the bounded slowdown (seconds).
const BSLDTau = 10

// Summarize computes the stream metrics of records.
func Summarize(recs []JobRecord) StreamMetrics {
	var m StreamMetrics
	var wsum, wr, ww, wait, bsld float64
	for _, r := range recs {
		run := float64(r.End - r.Start)
		resp := float64(r.End - r.Submit)
		w := float64(r.Procs()) * run
		wsum += w
		wr += w * resp
		ww += w * float64(r.Start-r.Submit)
		wait += float64(r.Start - r.Submit)
		bsld += max(1, resp/max(run, BSLDTau))
	}
	m.Jobs = len(recs)
	m.Work = wsum
	if m.Jobs > 0 {
		m.MeanWait = wait / float64(m.Jobs)
		m.MeanBSLD = bsld / float64(m.Jobs)
	}
	if wsum > 0 {
		m.AWRT, m.AWWT = wr/wsum, ww/wsum
	}
	return m
}

// Utilization is the share of each site's processors held by jobs over
// [from, to), and overall.
func Utilization(recs []JobRecord, capacity []int, from, to int64) (perSite []float64, overall float64) {
	perSite = make([]float64, len(capacity))
	if to <= from {
		return perSite, 0
	}
	busy := make([]float64, len(capacity))
	for _, r := range recs {
		a, b := max(r.Start, from), min(r.End, to)
		if b <= a {
			continue
		}
		for _, p := range r.Parts {
			busy[p.Site] += float64(p.Procs) * float64(b-a)
		}
	}
	var tb, tc float64
	span := float64(to - from)
	for i, c := range capacity {
		if c > 0 {
			perSite[i] = busy[i] / (float64(c) * span)
		}
		tb += busy[i]
		tc += float64(c)
	}
	return perSite, tb / (tc * span)
}

// Density is seed 004's objective: the processor-seconds of jobs that ended
// by T (= from + horizon) over horizon × total processors.
func Density(recs []JobRecord, totalProcs int, from, horizon int64) float64 {
	if horizon <= 0 || totalProcs <= 0 {
		return 0
	}
	var done float64
	for _, r := range recs {
		if r.End <= from+horizon {
			done += float64(r.Procs()) * float64(r.End-r.Start)
		}
	}
	return done / (float64(horizon) * float64(totalProcs))
}

// ExtraWait compares local jobs' waits with the same replay without grid
// jobs: the mean over jobs present in both of (wait − baseline wait), and
// the AWWT difference.
func ExtraWait(with, without []JobRecord) (mean, awwt float64) {
	base := make(map[string]int64, len(without))
	for _, r := range without {
		base[r.ID] = r.Start - r.Submit
	}
	var sum float64
	n := 0
	for _, r := range with {
		if b, ok := base[r.ID]; ok {
			sum += float64(r.Start - r.Submit - b)
			n++
		}
	}
	if n > 0 {
		mean = sum / float64(n)
	}
	return mean, Summarize(with).AWWT - Summarize(without).AWWT
}

// Makespan is the last end among records (from when there are none).
func Makespan(recs []JobRecord, from int64) int64 {
	end := from
	for _, r := range recs {
		end = max(end, r.End)
	}
	return end
}

func sortRecords(recs []JobRecord) {
	sort.Slice(recs, func(a, b int) bool {
		if recs[a].Start != recs[b].Start {
			return recs[a].Start < recs[b].Start
		}
		return recs[a].ID < recs[b].ID
	})
}

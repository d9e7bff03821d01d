package brokertest

import (
	"sort"

	"lookahead/broker"
	"lookahead/forecast"
)

// Planner is a small exact reference planner for tests of the broker
// machinery (not the co-allocation core, which has its own proofs): for each job, the earliest candidate start at which
// suitable per-node capacity (min over the interval of the sum of slots)
// adds up to the job's processors; speeds are taken as 1.
func Planner(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) ([]forecast.Allocation, error) {
	fcs = append([]forecast.Forecast(nil), fcs...)
	out := make([]forecast.Allocation, len(jobs))
	for i, j := range jobs {
		out[i] = placeOne(fcs, j, notBefore)
		for k := range fcs {
			take := map[string]int{}
			for _, p := range out[i].Parts {
				if p.Site == fcs[k].Site {
					take[p.Node] += p.Procs
				}
			}
			if len(take) > 0 {
				fcs[k].Slots = broker.Subtract(fcs[k].Slots, take, out[i].Start, out[i].End)
			}
		}
	}
	return out, nil
}

func placeOne(fcs []forecast.Forecast, j forecast.JobRequest, notBefore int64) forecast.Allocation {
	starts := []int64{notBefore}
	for _, f := range fcs {
		for _, s := range f.Slots {
			if s.Start > notBefore {
				starts = append(starts, s.Start)
			}
		}
	}
	sort.Slice(starts, func(a, b int) bool { return starts[a] < starts[b] })
	for _, t := range starts {
		a := forecast.Allocation{Job: j.ID, Start: t, End: t + j.Walltime}
		need := j.Procs
		sites := map[string]bool{}
		for _, f := range fcs {
			if need == 0 || (j.MaxSites > 0 && len(sites) >= j.MaxSites) {
				break
			}
			for _, n := range f.Nodes {
				c := nodeCap(f.Slots, n.Name, t, t+j.Walltime, j.MaxPrice)
				if c <= 0 || need == 0 {
					continue
				}
				use := min(c, need)
				need -= use
				sites[f.Site] = true
				a.Parts = append(a.Parts, forecast.Part{Site: f.Site, Node: n.Name, Procs: use})
				a.Cost += float64(use) * float64(j.Walltime) / 3600 * maxPrice(f.Slots, n.Name, t)
			}
		}
		if need == 0 {
			return a
		}
	}
	return forecast.Allocation{Job: j.ID, Error: "no fit in the horizon"}
}

func nodeCap(slots []forecast.Slot, node string, a, b int64, price float64) int {
	pts := []int64{a}
	for _, s := range slots {
		for _, p := range []int64{s.Start, s.End} {
			if s.Node == node && p > a && p < b {
				pts = append(pts, p)
			}
		}
	}
	best := -1
	for _, t := range pts {
		c := 0
		for _, s := range slots {
			if s.Node == node && s.Start <= t && t < s.End && s.Price <= price {
				c += s.Procs
			}
		}
		if best < 0 || c < best {
			best = c
		}
	}
	return best
}

func maxPrice(slots []forecast.Slot, node string, t int64) float64 {
	p := 0.0
	for _, s := range slots {
		if s.Node == node && s.Start <= t && t < s.End {
			p = max(p, s.Price)
		}
	}
	return p
}

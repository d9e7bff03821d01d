package replay

import (
	"math"
	"sort"

	"lookahead/forecast"
)

// naivePool is a quadratic test placer used to exercise the replay loop
// independently of the co-allocation core: for each candidate start (every
// slot boundary at or after notBefore) and each speed tier it checks every
// node's capacity directly from the per-node semantics.
type naivePool struct {
	fcs       []forecast.Forecast
	notBefore int64
	msf       float64
	staging   int64
}

func naiveFactory(msf float64, staging int64) PoolFactory {
	return func(fcs []forecast.Forecast, notBefore int64) (Pool, error) {
		return &naivePool{fcs: append([]forecast.Forecast(nil), fcs...), notBefore: notBefore, msf: msf, staging: staging}, nil
	}
}

type nodeRef struct {
	site, node int
	speed      float64
}

func (p *naivePool) Place(job forecast.JobRequest) forecast.Allocation {
	var starts []int64
	for _, f := range p.fcs {
		for _, s := range f.Slots {
			for _, t := range []int64{s.Start, s.End} {
				if t >= p.notBefore {
					starts = append(starts, t)
				}
			}
		}
	}
	starts = append(starts, p.notBefore)
	sort.Slice(starts, func(a, b int) bool { return starts[a] < starts[b] })
	var best forecast.Allocation
	for _, t := range starts {
		if best.Placed() && t >= best.Start {
			break
		}
		if a, ok := p.at(job, t); ok {
			best = a
		}
	}
	if !best.Placed() {
		return forecast.Allocation{Job: job.ID, Error: "no room in the horizon"}
	}
	p.fcs, _ = Consume(p.fcs, best, job.MaxPrice)
	return best
}

// at tries start t: single site first (no factor), then all sites.
func (p *naivePool) at(job forecast.JobRequest, t int64) (forecast.Allocation, bool) {
	for si := range p.fcs {
		if a, ok := p.fit(job, t, []int{si}, 1, 0); ok {
			return a, true
		}
	}
	if job.MaxSites == 1 || len(p.fcs) < 2 {
		return forecast.Allocation{}, false
	}
	all := make([]int, len(p.fcs))
	for i := range all {
		all[i] = i
	}
	return p.fit(job, t, all, p.msf, p.staging)
}

func (p *naivePool) fit(job forecast.JobRequest, t int64, sites []int, msf float64, staging int64) (forecast.Allocation, bool) {
	var nodes []nodeRef
	for _, si := range sites {
		for ni, n := range p.fcs[si].Nodes {
			nodes = append(nodes, nodeRef{si, ni, n.Speed})
		}
	}
	sort.SliceStable(nodes, func(a, b int) bool { return nodes[a].speed > nodes[b].speed })
	for k := range nodes {
		slow := nodes[k].speed
		dur := int64(math.Ceil(float64(job.Walltime)/slow*msf - 1e-9))
		var parts []forecast.Part
		need := job.Procs
		multi := len(sites) > 1
		for _, n := range nodes[:k+1] {
			if need == 0 {
				break
			}
			e := t + dur
			if multi {
				e += staging * int64(len(sites)-1)
			}
			c := min(p.avail(n, t, e, job.MaxPrice), need)
			if c > 0 {
				parts = append(parts, forecast.Part{Site: p.fcs[n.site].Site, Node: p.fcs[n.site].Nodes[n.node].Name, Procs: c})
				need -= c
			}
		}
		if need == 0 {
			a := forecast.Allocation{Job: job.ID, Start: t, End: t + dur, Parts: parts}
			if sitesOf(parts) > 1 {
				a.End += staging * int64(sitesOf(parts)-1)
			} else if multi {
				continue // the single-site pass already failed; this is a multi-site answer only
			}
			return a, true
		}
	}
	return forecast.Allocation{}, false
}

func sitesOf(parts []forecast.Part) int {
	seen := map[string]bool{}
	for _, p := range parts {
		seen[p.Site] = true
	}
	return len(seen)
}

// avail is min over [a, b) of the node's suitable slot processors.
func (p *naivePool) avail(n nodeRef, a, b int64, maxPrice float64) int {
	name := p.fcs[n.site].Nodes[n.node].Name
	var ss []forecast.Slot
	for _, s := range p.fcs[n.site].Slots {
		if s.Node == name && s.Price <= maxPrice && s.Start < b && s.End > a {
			ss = append(ss, s)
		}
	}
	cuts := breakpoints(ss, a, b)
	least := math.MaxInt
	for k := 0; k+1 < len(cuts); k++ {
		sum := 0
		for _, s := range ss {
			if s.Start <= cuts[k] && s.End >= cuts[k+1] {
				sum += s.Procs
			}
		}
		least = min(least, sum)
	}
	if least == math.MaxInt {
		return 0
	}
	return least
}

func (p *naivePool) Remaining() []forecast.Forecast { return p.fcs }

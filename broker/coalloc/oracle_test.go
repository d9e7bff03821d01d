package coalloc

import (
	"fmt"
	"math"
	"slices"

	"lookahead/forecast"
)

// The brute-force oracle and the allocation checker work on v1 forecasts
// only, straight from the per-node semantics of DESIGN.md: at instant u a
// node offers the sum of its suitable slots containing u; over [a, b) a job
// can hold the minimum of that. They share nothing with the planner but
// Options.Duration, the definition of how long an allocation holds.

type oNode struct {
	site  int
	node  forecast.Node
	slots []forecast.Slot
}

func oNodes(fcs []forecast.Forecast) map[string]*oNode {
	out := map[string]*oNode{}
	for si, f := range fcs {
		for _, n := range f.Nodes {
			out[f.Site+"/"+n.Name] = &oNode{site: si, node: n}
		}
		for _, s := range f.Slots {
			k := f.Site + "/" + s.Node
			out[k].slots = append(out[k].slots, s)
		}
	}
	return out
}

func meets(n forecast.Node, j forecast.JobRequest) bool {
	return n.Speed >= j.MinSpeed && n.MemMB >= j.MemMB && hasAll(n.Features, j.Features)
}

// capAt is the node's processors at instant u in slots priced <= maxPrice.
func capAt(slots []forecast.Slot, u int64, maxPrice float64) int64 {
	var c int64
	for _, s := range slots {
		if s.Price <= maxPrice && s.Start <= u && u < s.End {
			c += int64(s.Procs)
		}
	}
	return c
}

// points are the instants in [a, b) where a node's value can change.
func points(slots []forecast.Slot, a, b int64) []int64 {
	pts := []int64{a}
	for _, s := range slots {
		for _, x := range []int64{s.Start, s.End} {
			if x > a && x < b {
				pts = append(pts, x)
			}
		}
	}
	slices.Sort(pts)
	return slices.Compact(pts)
}

func minOver(slots []forecast.Slot, a, b int64, maxPrice float64) int64 {
	m := int64(math.MaxInt64)
	for _, u := range points(slots, a, b) {
		m = min(m, capAt(slots, u, maxPrice))
	}
	return m
}

// oracle returns the earliest start and the earliest finish of any
// feasible allocation of job on fcs, trying every site subset of at most
// max_sites sites, every speed threshold and every candidate start.
func oracle(fcs []forecast.Forecast, job forecast.JobRequest, opts Options) (start, finish int64, ok bool) {
	start, finish = math.MaxInt64, math.MaxInt64
	for _, pl := range oraclePlacements(fcs, job, opts) {
		start, finish, ok = min(start, pl.start), min(finish, pl.end), true
	}
	return start, finish, ok
}

// oPlacement is the earliest feasible allocation on one site subset (mask)
// with the nodes at least speed fast: it holds for held seconds.
type oPlacement struct {
	mask             int
	speed            float64
	start, end, held int64
}

// oraclePlacements lists, for every site subset of at most max_sites sites
// and every speed threshold, the earliest feasible allocation.
func oraclePlacements(fcs []forecast.Forecast, job forecast.JobRequest, opts Options) []oPlacement {
	nodes := oNodes(fcs)
	cands := []int64{opts.NotBefore}
	var speeds []float64
	for _, n := range nodes {
		for _, s := range n.slots {
			if s.Start > opts.NotBefore {
				cands = append(cands, s.Start)
			}
			if s.End > opts.NotBefore {
				cands = append(cands, s.End)
			}
		}
		if meets(n.node, job) {
			speeds = append(speeds, n.node.Speed)
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	k := job.MaxSites
	if k == 0 {
		k = len(fcs)
	}
	var out []oPlacement
	for mask := 1; mask < 1<<len(fcs); mask++ {
		m := popcount(mask)
		if m > k {
			continue
		}
		for _, sp := range speeds {
			d := opts.Duration(job.Walltime, sp, m)
			for _, t := range cands {
				if oCapacity(nodes, job, mask, sp, t, t+d) >= int64(job.Procs) {
					out = append(out, oPlacement{mask: mask, speed: sp, start: t, end: t + d, held: d})
					break
				}
			}
		}
	}
	return out
}

// oCapacity is what the job can hold over [a, b) on the nodes of the sites
// in mask that meet it and are at least speed fast.
func oCapacity(nodes map[string]*oNode, job forecast.JobRequest, mask int, speed float64, a, b int64) int64 {
	var c int64
	for _, n := range nodes {
		if mask&(1<<n.site) != 0 && meets(n.node, job) && n.node.Speed >= speed {
			c += minOver(n.slots, a, b, job.MaxPrice)
		}
	}
	return c
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

// levelAt is a node's processors at exactly price pr at instant u.
func levelAt(slots []forecast.Slot, u int64, pr float64) int64 {
	var c int64
	for _, s := range slots {
		if s.Price == pr && s.Start <= u && u < s.End {
			c += int64(s.Procs)
		}
	}
	return c
}

// checkAlloc verifies a placed allocation against the forecasts before and
// after it was placed: it is feasible, holds for Options.Duration, and the
// pool lost exactly its processors, cheapest price level first at every
// instant, at the stated cost.
func checkAlloc(before, after []forecast.Forecast, job forecast.JobRequest, a forecast.Allocation, opts Options) error {
	if a.Error != "" || len(a.Parts) == 0 {
		return fmt.Errorf("not placed: %+v", a)
	}
	if a.Start < opts.NotBefore {
		return fmt.Errorf("start %d before NotBefore %d", a.Start, opts.NotBefore)
	}
	nb, na := oNodes(before), oNodes(after)
	used := map[string]int64{}
	partCost := map[string]float64{}
	for _, pt := range a.Parts {
		partCost[pt.Site+"/"+pt.Node] = pt.Cost
	}
	slowest := math.Inf(1)
	var total int64
	for _, pt := range a.Parts {
		k := pt.Site + "/" + pt.Node
		n, ok := nb[k]
		switch {
		case !ok:
			return fmt.Errorf("part on unknown node %s", k)
		case used[k] != 0:
			return fmt.Errorf("two parts on node %s", k)
		case pt.Procs <= 0:
			return fmt.Errorf("part %s has %d procs", k, pt.Procs)
		case !meets(n.node, job):
			return fmt.Errorf("node %s does not meet the job's requirements", k)
		}
		used[k] = int64(pt.Procs)
		total += int64(pt.Procs)
		slowest = min(slowest, n.node.Speed)
	}
	if total != int64(job.Procs) {
		return fmt.Errorf("parts hold %d procs, job wants %d", total, job.Procs)
	}
	sites := len(a.Sites())
	if job.MaxSites > 0 && sites > job.MaxSites {
		return fmt.Errorf("%d sites, max_sites %d", sites, job.MaxSites)
	}
	if want := a.Start + opts.Duration(job.Walltime, slowest, sites); a.End != want {
		return fmt.Errorf("end %d, want start+duration = %d", a.End, want)
	}
	var cost float64
	for k, n := range nb {
		c, err := checkNode(n.slots, na[k].slots, used[k], a.Start, a.End, job.MaxPrice)
		if err != nil {
			return fmt.Errorf("node %s: %w", k, err)
		}
		if pc := partCost[k]; used[k] > 0 && math.Abs(pc-c) > 1e-9*math.Max(1, c) {
			return fmt.Errorf("part on %s costs %v, its processors are worth %v", k, pc, c)
		}
		cost += c
	}
	if math.Abs(cost-a.Cost) > 1e-9*math.Max(1, cost) {
		return fmt.Errorf("cost %v, removed capacity is worth %v", a.Cost, cost)
	}
	return nil
}

// checkNode compares one node's slots before and after: outside [s, e)
// nothing changed; inside, exactly q processors went, all priced at most
// maxPrice, cheapest level first. It returns the cost of what went.
func checkNode(before, after []forecast.Slot, q, s, e int64, maxPrice float64) (float64, error) {
	var prices []float64
	pts := []int64{s, e}
	for _, sl := range append(slices.Clone(before), after...) {
		prices = append(prices, sl.Price)
		pts = append(pts, sl.Start, sl.End)
	}
	slices.Sort(prices)
	prices = slices.Compact(prices)
	slices.Sort(pts)
	pts = slices.Compact(pts)
	var cost float64
	for i, u := range pts {
		inside := u >= s && u < e
		var removed int64
		cheaperLeft := false
		for _, pr := range prices {
			b, a := levelAt(before, u, pr), levelAt(after, u, pr)
			r := b - a
			switch {
			case a < 0:
				return 0, fmt.Errorf("negative capacity at %d price %v", u, pr)
			case !inside && r != 0:
				return 0, fmt.Errorf("changed at %d outside [%d,%d)", u, s, e)
			case r < 0:
				return 0, fmt.Errorf("gained %d at %d price %v", -r, u, pr)
			case r > 0 && pr > maxPrice:
				return 0, fmt.Errorf("took price %v above max %v", pr, maxPrice)
			case r > 0 && cheaperLeft:
				return 0, fmt.Errorf("took price %v at %d while cheaper processors were left", pr, u)
			}
			if a > 0 && pr <= maxPrice {
				cheaperLeft = true
			}
			removed += r
			if i+1 < len(pts) {
				cost += float64(r) * float64(pts[i+1]-u) * pr / 3600
			}
		}
		if inside && removed != q {
			return 0, fmt.Errorf("removed %d at %d, part holds %d", removed, u, q)
		}
	}
	return cost, nil
}

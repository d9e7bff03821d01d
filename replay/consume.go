package replay

import (
	"fmt"
	"sort"

	"lookahead/forecast"
)

// Consume returns copies of the forecasts with the allocation's processors
// taken out of their slots over [alloc.Start, alloc.End). Only slots of
// price ≤ maxPrice are used (cheapest first), so Consume is also the check
// that an allocation fits the forecast it was planned on at the price the
// job pays: it fails, naming the node and the instant, when it does not.
// The input forecasts are not modified.
func Consume(fcs []forecast.Forecast, alloc forecast.Allocation, maxPrice float64) ([]forecast.Forecast, error) {
	out := append([]forecast.Forecast(nil), fcs...)
	bySite := map[string]int{}
	for i, f := range out {
		bySite[f.Site] = i
	}
	need := map[string]map[string]int{}
	for _, p := range alloc.Parts {
		if need[p.Site] == nil {
			need[p.Site] = map[string]int{}
		}
		need[p.Site][p.Node] += p.Procs
	}
	for site, nodes := range need {
		i, ok := bySite[site]
		if !ok {
			return nil, fmt.Errorf("job %s: no forecast for site %s", alloc.Job, site)
		}
		slots, err := takeSite(out[i].Slots, nodes, alloc.Start, alloc.End, maxPrice)
		if err != nil {
			return nil, fmt.Errorf("job %s on %s/%w", alloc.Job, site, err)
		}
		out[i].Slots = slots
	}
	return out, nil
}

// takeSite takes need[node] processors off each node's slots over [a, b):
// one pass to split the slots by node, then takeNode per needed node.
func takeSite(slots []forecast.Slot, need map[string]int, a, b int64, maxPrice float64) ([]forecast.Slot, error) {
	out := make([]forecast.Slot, 0, len(slots)+4)
	touched := map[string][]forecast.Slot{}
	for _, s := range slots {
		if need[s.Node] > 0 {
			touched[s.Node] = append(touched[s.Node], s)
		} else {
			out = append(out, s)
		}
	}
	nodes := make([]string, 0, len(need))
	for n := range need {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		kept, err := takeNode(touched[n], n, need[n], a, b, maxPrice)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, kept...)
	}
	return out, nil
}

// takeNode removes procs processors of node over [a, b) from slots.
func takeNode(slots []forecast.Slot, node string, procs int, a, b int64, maxPrice float64) ([]forecast.Slot, error) {
	var keep, hit []forecast.Slot
	for _, s := range slots {
		if s.Node == node && s.Start < b && s.End > a && s.Price <= maxPrice {
			hit = append(hit, s)
		} else {
			keep = append(keep, s)
		}
	}
	sort.SliceStable(hit, func(x, y int) bool { return hit[x].Price < hit[y].Price })
	cuts := breakpoints(hit, a, b)
	for _, s := range hit {
		if s.Start < a {
			keep = append(keep, forecast.Slot{Node: node, Procs: s.Procs, Start: s.Start, End: a, Price: s.Price})
		}
		if s.End > b {
			keep = append(keep, forecast.Slot{Node: node, Procs: s.Procs, Start: b, End: s.End, Price: s.Price})
		}
	}
	for k := 0; k+1 < len(cuts); k++ {
		lo, hi := cuts[k], cuts[k+1]
		left := procs
		for _, s := range hit {
			if s.Start > lo || s.End < hi {
				continue
			}
			take := min(left, s.Procs)
			left -= take
			if rest := s.Procs - take; rest > 0 {
				keep = append(keep, forecast.Slot{Node: node, Procs: rest, Start: lo, End: hi, Price: s.Price})
			}
		}
		if left > 0 {
			return nil, fmt.Errorf("%d of %d processors missing at %d (price ≤ %g)", left, procs, lo, maxPrice)
		}
	}
	return keep, nil
}

// breakpoints are a, b and every slot boundary strictly inside (a, b),
// sorted and distinct.
func breakpoints(slots []forecast.Slot, a, b int64) []int64 {
	set := map[int64]bool{a: true, b: true}
	for _, s := range slots {
		if s.Start > a && s.Start < b {
			set[s.Start] = true
		}
		if s.End > a && s.End < b {
			set[s.End] = true
		}
	}
	out := make([]int64, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

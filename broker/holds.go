package broker

import (
	"sort"

	"lookahead/forecast"
)

// ApplyHolds removes from each forecast the processors that committing,
// reserved and running jobs hold on its site, until the end of their
// reservations there (the slack a site added included). A forecast newer than the
// revision a hold was planned on already accounts for the reservation (the
// agent publishes slots without it), so only forecasts with Seq at or below
// that revision are changed. Holds that ended by now are ignored. The input
// forecasts are not modified.
func ApplyHolds(fcs []forecast.Forecast, holds []Hold, now int64) []forecast.Forecast {
	out := make([]forecast.Forecast, len(fcs))
	for i, f := range fcs {
		out[i] = f
		var mine []Hold
		for _, h := range holds {
			if rev, planned := h.Revisions[f.Site]; planned && f.Seq <= rev && max(h.Alloc.End, h.Ends[f.Site]) > now {
				mine = append(mine, h)
			}
		}
		if len(mine) > 0 {
			out[i].Slots = subtractHolds(f.Site, f.Slots, mine)
		}
	}
	return out
}

// subtractHolds applies the holds' parts on site to its slots, node by
// node, so each hold touches only the slots of its own nodes.
func subtractHolds(site string, slots []forecast.Slot, holds []Hold) []forecast.Slot {
	byNode := map[string][]forecast.Slot{}
	var order []string
	for _, s := range slots {
		if _, seen := byNode[s.Node]; !seen {
			order = append(order, s.Node)
		}
		byNode[s.Node] = append(byNode[s.Node], s)
	}
	for _, h := range holds {
		end := max(h.Alloc.End, h.Ends[site])
		for _, p := range h.Alloc.Parts {
			if p.Site == site && len(byNode[p.Node]) > 0 {
				byNode[p.Node] = Subtract(byNode[p.Node], map[string]int{p.Node: p.Procs}, h.Alloc.Start, end)
			}
		}
	}
	out := make([]forecast.Slot, 0, len(slots))
	for _, n := range order {
		out = append(out, byNode[n]...)
	}
	return out
}

// Subtract takes take[node] processors off each node's slots over
// [start, end), cheapest slots first, and returns the remaining slots
// (a new slice; the input is not modified). Where a node has fewer
// processors than asked at some instant, all of them go.
func Subtract(slots []forecast.Slot, take map[string]int, start, end int64) []forecast.Slot {
	out := make([]forecast.Slot, 0, len(slots)+4)
	middle := map[string][]forecast.Slot{}
	for _, s := range slots {
		if take[s.Node] <= 0 || s.End <= start || s.Start >= end {
			out = append(out, s)
			continue
		}
		if s.Start < start {
			b := s
			b.End = start
			out = append(out, b)
		}
		if s.End > end {
			a := s
			a.Start = end
			out = append(out, a)
		}
		m := s
		m.Start, m.End = max(s.Start, start), min(s.End, end)
		middle[s.Node] = append(middle[s.Node], m)
	}
	nodes := make([]string, 0, len(middle))
	for n := range middle {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		out = append(out, takeFrom(middle[n], take[n])...)
	}
	return out
}

// takeFrom subtracts need processors at every instant from pieces (all of
// one node), splitting them at every piece boundary.
func takeFrom(pieces []forecast.Slot, need int) []forecast.Slot {
	sort.SliceStable(pieces, func(a, b int) bool { return pieces[a].Price < pieces[b].Price })
	var cuts []int64
	for _, p := range pieces {
		cuts = append(cuts, p.Start, p.End)
	}
	sort.Slice(cuts, func(a, b int) bool { return cuts[a] < cuts[b] })
	var out []forecast.Slot
	for k := 0; k+1 < len(cuts); k++ {
		a, b := cuts[k], cuts[k+1]
		if a == b {
			continue
		}
		left := need
		for _, p := range pieces {
			if p.Start > a || p.End < b {
				continue
			}
			d := min(left, p.Procs)
			left -= d
			if p.Procs-d > 0 {
				q := p
				q.Start, q.End, q.Procs = a, b, p.Procs-d
				out = append(out, q)
			}
		}
	}
	return mergeAbutting(out)
}

// mergeAbutting joins consecutive pieces of one node that abut with the
// same processors and price.
func mergeAbutting(s []forecast.Slot) []forecast.Slot {
	sort.SliceStable(s, func(a, b int) bool {
		if s[a].Price != s[b].Price {
			return s[a].Price < s[b].Price
		}
		if s[a].Procs != s[b].Procs {
			return s[a].Procs < s[b].Procs
		}
		return s[a].Start < s[b].Start
	})
	var out []forecast.Slot
	for _, p := range s {
		if n := len(out); n > 0 && out[n-1].End == p.Start && out[n-1].Procs == p.Procs && out[n-1].Price == p.Price {
			out[n-1].End = p.End
			continue
		}
		out = append(out, p)
	}
	return out
}

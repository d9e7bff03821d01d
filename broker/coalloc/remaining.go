package coalloc

import (
	"cmp"
	"slices"

	"lookahead/forecast"
)

// Remaining returns what the pool has left as v1 forecasts, one per site in
// the pool's order, with the sites' metadata: per node and price, the
// maximal intervals of constant available processors (slot time before
// NotBefore is not included). Useful to show an operator what is left, to
// replay, and to check the planner.
func (p *Pool) Remaining() []forecast.Forecast {
	out := make([]forecast.Forecast, len(p.sites))
	for i, s := range p.sites {
		out[i] = s.fc
		out[i].Slots = []forecast.Slot{}
		for _, n := range s.nodes {
			out[i].Slots = append(out[i].Slots, p.nodeSlots(n)...)
		}
	}
	return out
}

func (p *Pool) nodeSlots(n int32) []forecast.Slot {
	byPrice := map[float64][]event{}
	var prices []float64
	for _, pc := range p.nodes[n].pieces {
		if _, ok := byPrice[pc.price]; !ok {
			prices = append(prices, pc.price)
		}
		byPrice[pc.price] = p.appendEdges(byPrice[pc.price], n, pc)
	}
	slices.Sort(prices)
	var out []forecast.Slot
	for _, price := range prices {
		ev := byPrice[price]
		slices.SortFunc(ev, func(a, b event) int { return cmp.Compare(a.at, b.at) })
		var cur int64
		open := -1
		for i := 0; i < len(ev); {
			x := ev[i].at
			for ; i < len(ev) && ev[i].at == x; i++ {
				cur += int64(ev[i].procs)
			}
			if open >= 0 {
				if int64(out[open].Procs) == cur {
					continue
				}
				out[open].End = x
				open = -1
			}
			if cur > 0 {
				out = append(out, forecast.Slot{Node: p.nodes[n].name, Procs: int(cur), Start: x, Price: price})
				open = len(out) - 1
			}
		}
	}
	return out
}

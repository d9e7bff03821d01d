package forecast

import (
	"cmp"
	"slices"
)

// Hold is processors of one node taken over [Start, End): by a running job
// or a reservation (Priced false: never offered), or by a queued local job
// forecast to run there (Priced true: offered to grid jobs at Price).
type Hold struct {
	Node   string
	Procs  int
	Start  int64
	End    int64
	Priced bool
	Price  float64
}

// BuildSlots cuts [from, horizon) of every usable node into slots: time
// not held by anything at base price, and time held by priced holds at
// their price. Unpriced holds yield nothing; unusable nodes yield nothing.
// Per node and price the processors over time are stacked into as few,
// as long slots as possible (adjacent pieces with the same price merge), so
// at any instant the node's slots at a price sum to exactly the
// processors offered at that price. Slots come sorted by node (in nodes'
// order), then start, then price.
func BuildSlots(nodes []SnapshotNode, holds []Hold, from, horizon int64, base float64) []Slot {
	if horizon <= from {
		return nil
	}
	byNode := map[string][]Hold{}
	for _, h := range holds {
		if h.Procs > 0 && h.End > from && h.Start < horizon {
			byNode[h.Node] = append(byNode[h.Node], h)
		}
	}
	var out []Slot
	for _, n := range nodes {
		if n.Usable() {
			out = nodeSlots(out, n, byNode[n.Name], from, horizon, base)
		}
	}
	return out
}

type change struct {
	t      int64
	delta  int
	price  float64
	priced bool
}

// nodeSlots sweeps one node's holds in time order and stacks the level of
// each price (free processors at base, plus priced holds) into slots.
func nodeSlots(out []Slot, n SnapshotNode, holds []Hold, from, horizon int64, base float64) []Slot {
	changes := make([]change, 0, 2*len(holds))
	for _, h := range holds {
		s, e := max(h.Start, from), min(h.End, horizon)
		changes = append(changes, change{s, h.Procs, h.Price, h.Priced}, change{e, -h.Procs, h.Price, h.Priced})
	}
	slices.SortFunc(changes, func(a, b change) int { return cmp.Compare(a.t, b.t) })
	first := len(out)
	emit := func(procs int, price float64, s, e int64) {
		if procs > 0 && e > s {
			out = append(out, Slot{Node: n.Name, Procs: procs, Start: s, End: e, Price: price})
		}
	}
	stacks := map[float64]*stack{base: {}}
	priced := map[float64]int{}
	held := 0
	level := func(t int64) {
		free := max(n.Procs-held, 0)
		for p, st := range stacks {
			h := priced[p]
			if p == base {
				h += free
			}
			st.set(t, h, p, emit)
		}
	}
	level(from)
	for i := 0; i < len(changes); {
		t := changes[i].t
		for ; i < len(changes) && changes[i].t == t; i++ {
			c := changes[i]
			held += c.delta
			if c.priced {
				priced[c.price] += c.delta
				if stacks[c.price] == nil {
					stacks[c.price] = &stack{}
				}
			}
		}
		level(t)
	}
	for p, st := range stacks {
		st.set(horizon, 0, p, emit)
	}
	mine := out[first:]
	slices.SortFunc(mine, func(a, b Slot) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Price, b.Price); c != 0 {
			return c
		}
		return cmp.Compare(a.End, b.End)
	})
	return out
}

// stack decomposes a step function of processors over time into layers:
// raising the level opens a layer, lowering it closes (emits) layers from
// the top, so a level that returns to where it was keeps its old layers.
type stack struct {
	layers []layer
	height int
}

type layer struct {
	procs int
	start int64
}

func (s *stack) set(t int64, h int, price float64, emit func(int, float64, int64, int64)) {
	for s.height > h {
		top := &s.layers[len(s.layers)-1]
		excess := s.height - h
		if top.procs <= excess {
			emit(top.procs, price, top.start, t)
			s.height -= top.procs
			s.layers = s.layers[:len(s.layers)-1]
			continue
		}
		emit(excess, price, top.start, t)
		top.procs -= excess
		s.height = h
	}
	if h > s.height {
		s.layers = append(s.layers, layer{procs: h - s.height, start: t})
		s.height = h
	}
}

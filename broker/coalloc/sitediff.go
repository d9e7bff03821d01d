package coalloc

import (
	"cmp"
	"slices"

	"lookahead/forecast"
)

// diffSite adds the difference of one site's slots to the walk's delta,
// node by node. The difference is linear, so it may be taken run by run
// when both forecasts list their slots in runs of one node each in the
// same order of names (what forecast.BuildSlots and the agents give);
// otherwise the slots are grouped by node first. Only what lies in
// [NotBefore, cut) counts: a forecast rebuilt every cycle starts its
// slots at its own instant and ends them at its own horizon, and a node
// whose slots differ only there is skipped without touching the delta.
//
// The cut is exact: the difference is only ever asked about before the
// reach of one of last cycle's answers (touches, hits of windows that end
// by the reach), and a difference cut at the latest reach is the same
// there, with the same earliest instants before it (delta.first); jobs
// that are new this cycle are planned without asking. What jobs take and
// give back (walk.apply) is not cut.
func (w *walk) diffSite(site int32, old, cur []forecast.Slot) {
	runs, ok := pairRuns(old, cur, w.runs[:0])
	w.runs = runs[:0]
	if !ok {
		w.diffGrouped(site, old, cur)
		return
	}
	for _, r := range runs {
		w.diffNode(site, old[r.old0:r.old1], cur[r.cur0:r.cur1])
	}
}

// runPair is one node's run of slots in the old and the new forecast.
type runPair struct{ old0, old1, cur0, cur1 int }

// pairRuns splits old and cur into runs of slots of one node and pairs
// them in order; ok is false when the runs' names do not match.
func pairRuns(old, cur []forecast.Slot, out []runPair) ([]runPair, bool) {
	i, j := 0, 0
	for i < len(old) && j < len(cur) {
		if old[i].Node != cur[j].Node {
			return out, false
		}
		r := runPair{old0: i, old1: runEnd(old, i), cur0: j, cur1: runEnd(cur, j)}
		out = append(out, r)
		i, j = r.old1, r.cur1
	}
	return out, i == len(old) && j == len(cur)
}

// runEnd is the end of the run of slots of slots[i]'s node from i.
func runEnd(slots []forecast.Slot, i int) int {
	j := i + 1
	for j < len(slots) && slots[j].Node == slots[i].Node {
		j++
	}
	return j
}

// diffGrouped groups the slots by node (any order) and adds the
// difference of each node.
func (w *walk) diffGrouped(site int32, old, cur []forecast.Slot) {
	byNode := map[string]*[2][]forecast.Slot{}
	group := func(slots []forecast.Slot, k int) {
		for _, s := range slots {
			g := byNode[s.Node]
			if g == nil {
				g = &[2][]forecast.Slot{}
				byNode[s.Node] = g
			}
			g[k] = append(g[k], s)
		}
	}
	group(old, 0)
	group(cur, 1)
	for _, g := range byNode {
		w.diffNode(site, g[0], g[1])
	}
}

// diffNode adds cur − old, both slots of one node of site, from the
// cycle's NotBefore on: per price, the merged edges of the step function,
// settled once per key. Nothing is added when the two are the same from
// NotBefore on; slots of a node the pool does not know are skipped (the
// forecast was refused).
func (w *walk) diffNode(site int32, old, cur []forecast.Slot) {
	from, to := w.d.from, w.cut
	if to <= from || sameIn(old, cur, from, to) {
		return
	}
	name := cur
	if len(name) == 0 {
		name = old
	}
	n, ok := w.node(site, name[0].Node)
	if !ok {
		return
	}
	es := w.edges[:0]
	es = appendEdges(es, old, from, to, -1)
	es = appendEdges(es, cur, from, to, 1)
	slices.SortFunc(es, func(a, b priceEdge) int {
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.at, b.at))
	})
	for i := 0; i < len(es); {
		j := i
		run := w.steps[:0]
		for ; j < len(es) && es[j].price == es[i].price; j++ {
			if k := len(run); k > 0 && run[k-1].at == es[j].at {
				run[k-1].procs += es[j].procs
				if run[k-1].procs == 0 {
					run = run[:k-1]
				}
				continue
			}
			run = append(run, dedge{at: es[j].at, procs: es[j].procs})
		}
		if len(run) > 0 {
			w.d.addEdges(dkey{node: n, price: es[i].price}, run)
		}
		w.steps = run[:0]
		i = j
	}
	w.edges = es[:0]
}

// priceEdge is one edge of a node's difference at one price.
type priceEdge struct {
	price     float64
	at, procs int64
}

// appendEdges appends sign × each slot's processors over its part in
// [from, to), as two edges.
func appendEdges(es []priceEdge, slots []forecast.Slot, from, to, sign int64) []priceEdge {
	for _, s := range slots {
		start, end := max(s.Start, from), min(s.End, to)
		if end <= start || s.Procs == 0 {
			continue
		}
		p := sign * int64(s.Procs)
		es = append(es, priceEdge{price: s.Price, at: start, procs: p}, priceEdge{price: s.Price, at: end, procs: -p})
	}
	return es
}

// sameIn reports whether a and b list the same slots, in the same order,
// once each is cut to [from, to) (slots left empty dropped).
func sameIn(a, b []forecast.Slot, from, to int64) bool {
	i, j := 0, 0
	for {
		for i < len(a) && (min(a[i].End, to) <= max(a[i].Start, from) || a[i].Procs == 0) {
			i++
		}
		for j < len(b) && (min(b[j].End, to) <= max(b[j].Start, from) || b[j].Procs == 0) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		x, y := a[i], b[j]
		if x.Procs != y.Procs || x.Price != y.Price ||
			max(x.Start, from) != max(y.Start, from) || min(x.End, to) != min(y.End, to) {
			return false
		}
		i, j = i+1, j+1
	}
}

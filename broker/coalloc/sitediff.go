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
	w.hint = 0
	if !ok {
		w.diffGrouped(site, old, cur)
		return
	}
	for _, r := range runs {
		w.diffNode(site, old[r.old0:r.old1], cur[r.cur0:r.cur1])
	}
}

// flushDiff adds the forecasts' differences diffSite gathered to the
// delta, all at once (its maps sized once).
func (w *walk) flushDiff() {
	w.d.addAll(w.pend)
	w.pend, w.steps = nil, nil
}

// pending is one node and price's merged edges, gathered by diffNode.
type pending struct {
	k  dkey
	es []dedge
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
		r := runPair{old0: i, old1: nodeRunEnd(old, i), cur0: j, cur1: nodeRunEnd(cur, j)}
		out = append(out, r)
		i, j = r.old1, r.cur1
	}
	return out, i == len(old) && j == len(cur)
}

// nodeRunEnd is the end of the run of slots of slots[i]'s node from i.
func nodeRunEnd(slots []forecast.Slot, i int) int {
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
	n, ok := w.nodeNear(site, name[0].Node)
	if !ok {
		return
	}
	es := w.edges[:0]
	es = appendEdges(es, old, from, to, -1)
	es = appendEdges(es, cur, from, to, 1)
	sortEdges(es)
	for i := 0; i < len(es); {
		j, first := i, len(w.steps)
		for ; j < len(es) && es[j].price == es[i].price; j++ {
			if k := len(w.steps); k > first && w.steps[k-1].at == es[j].at {
				w.steps[k-1].procs += es[j].procs
				if w.steps[k-1].procs == 0 {
					w.steps = w.steps[:k-1]
				}
				continue
			}
			w.steps = append(w.steps, dedge{at: es[j].at, procs: es[j].procs})
		}
		if k := len(w.steps); k > first {
			w.pend = append(w.pend, pending{k: dkey{node: n, price: es[i].price}, es: w.steps[first:k:k]})
		}
		i = j
	}
	w.edges = es[:0]
}

// nodeNear is node(site, name), trying first the node after the last one
// found on the site (runs come in the forecast's order of nodes, which is
// the pool's).
func (w *walk) nodeNear(site int32, name string) (int32, bool) {
	ns := w.p.sites[site].nodes
	if w.hint < len(ns) && w.p.nodes[ns[w.hint]].name == name {
		w.hint++
		return ns[w.hint-1], true
	}
	i, ok := w.nodePos(site, name)
	if !ok {
		return 0, false
	}
	w.hint = int(i) + 1
	return ns[i], true
}

// sortEdges sorts by price, then instant (insertion sort: a node's edges
// are few).
func sortEdges(es []priceEdge) {
	if len(es) > 24 {
		slices.SortFunc(es, func(a, b priceEdge) int {
			return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.at, b.at))
		})
		return
	}
	for i := 1; i < len(es); i++ {
		e := es[i]
		j := i
		for ; j > 0 && (es[j-1].price > e.price || (es[j-1].price == e.price && es[j-1].at > e.at)); j-- {
			es[j] = es[j-1]
		}
		es[j] = e
	}
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
		if x.Node != y.Node || x.Procs != y.Procs || x.Price != y.Price ||
			max(x.Start, from) != max(y.Start, from) || min(x.End, to) != min(y.End, to) {
			return false
		}
		i, j = i+1, j+1
	}
}

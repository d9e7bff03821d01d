package wire

import "maps"

// SameNodes says whether two reservations hold the same processors on
// the same nodes: node by node, or, when either lists its per-node counts
// as unknown (CoresUnknown), the same node set and the same total.
func SameNodes(a, b Reservation) bool {
	ka, ta := nodeTotals(a.Nodes)
	kb, tb := nodeTotals(b.Nodes)
	if a.CoresUnknown || b.CoresUnknown {
		return ta == tb && len(ka) == len(kb) && sameKeys(ka, kb)
	}
	return maps.Equal(ka, kb)
}

// nodeTotals is the processors per node (a node listed twice adds up)
// and their total.
func nodeTotals(ns []NodeProcs) (map[string]int, int) {
	m, total := make(map[string]int, len(ns)), 0
	for _, n := range ns {
		m[n.Node] += n.Procs
		total += n.Procs
	}
	return m, total
}

func sameKeys(a, b map[string]int) bool {
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

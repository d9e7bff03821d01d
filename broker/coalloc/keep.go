package coalloc

import (
	"slices"

	"lookahead/forecast"
)

// maxDelta bounds the difference the walk follows (nonzero node × price
// keys): beyond it, testing every job against it costs more than planning
// the rest of the queue again, which is what the walk then does.
const maxDelta = 2048

// keepsWhenOthersLost lists the criteria whose answer stays when the pool
// loses processors the answer does not use: the chosen allocation stays
// feasible and every other one can only get worse (independence of
// irrelevant alternatives). A criterion that is not listed (say one that
// ranks within a tolerance of the best) is planned again on any change.
var keepsWhenOthersLost = []string{forecast.EarliestStart, forecast.EarliestFinish}

// onlyLostElsewhere reports whether, for a placed job of such a criterion,
// the slots it may use only lost processors, and none on what its answer
// rests on: the nodes it holds (for an allocation over several sites,
// every node of those sites, whose capacities ranked them) from its start
// to its reach (the window its search judged the start on).
func (w *walk) onlyLostElsewhere(o *entry) bool {
	if !o.alloc.Placed() || !slices.Contains(keepsWhenOthersLost, o.job.CriterionOrDefault()) ||
		w.d.touches(w.classes, o.job.MaxPrice, o.reach, true) {
		return false
	}
	used := map[int32]bool{}
	sites := map[int32]bool{}
	for _, part := range o.alloc.Parts {
		s, ok := w.site(part.Site)
		if !ok {
			return false
		}
		n, ok := w.node(s, part.Node)
		if !ok {
			return false
		}
		used[n], sites[s] = true, true
	}
	multi := len(sites) > 1
	on := func(n int32) bool { return used[n] || (multi && sites[w.p.nodeSite[n]]) }
	return !w.d.hits(on, o.job.MaxPrice, o.alloc.Start, o.reach)
}

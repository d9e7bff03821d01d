package coalloc

import (
	"slices"

	"lookahead/forecast"
)

// maxDelta bounds the difference the walk follows (nonzero node × price
// keys), and maxHitWork the keys its tests of placed jobs against nodes
// and windows (delta.hits, linear in the keys) may look at in one cycle:
// beyond them, testing every job costs more than planning the rest of the
// queue again, which is what the walk then does. Testing whether a job's
// slots changed at all is O(classes · log keys) (the per-class summary).
// After maxStreak jobs in a row that the difference sent to be planned
// again, it is taken to cover the rest of the queue too (a change that
// spread through a dense grid), and is no longer followed.
const (
	maxDelta   = 1 << 16
	maxHitWork = 1 << 26
	maxStreak  = 512
)

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

// nodesMoved reports whether sites that came or left change what o's
// answer rests on besides their slots: whether any node meets the job's
// requirements (the two no-fit answers), and, for a placed job of a
// criterion not in keepsWhenOthersLost or planned with coarse tiers, the
// speed tiers its search uses.
func (w *walk) nodesMoved(o *entry) bool {
	switch o.alloc.Error {
	case NoFitCapacity:
		return !slices.Contains(w.usable(o.job), true)
	case NoFitRequirements:
		return slices.Contains(w.usable(o.job), true)
	}
	// With exact tiers a tier that came or went with a site's nodes only
	// adds or drops candidates no better than another tier's; coarse tiers
	// always include the slowest usable speed, so a site that brings or
	// takes that speed changes which nodes a coarse tier plans with.
	exact := len(w.p.opts.Tiers) == 0
	if !o.alloc.Placed() || len(w.moved) == 0 || (exact && slices.Contains(keepsWhenOthersLost, o.job.CriterionOrDefault())) {
		return false
	}
	return slices.ContainsFunc(w.moved, func(n forecast.Node) bool {
		return n.Speed >= o.job.MinSpeed && n.MemMB >= o.job.MemMB && hasAll(n.Features, o.job.Features)
	})
}

// windowsUntouched reports whether, for a placed job of any criterion, the
// slots it may use only lost processors before its reach, and none within
// the window of any search that found a start, on the nodes that search
// used (requirements met, at least its tier fast). Each such search then
// finds the same start with the same node capacities (losing processors
// elsewhere never makes an earlier start feasible), every search that found
// none still finds none (its limit comes from the starts found), and the
// node choice and cost read only those windows: so the candidates, and the
// answer picked among them, are the same. This is what lets least-held
// (which has no independence of irrelevant alternatives: a loss on a node
// it does not hold can remove a candidate it compared) keep answers that a
// change cannot reach.
func (w *walk) windowsUntouched(o *entry) bool {
	if !o.alloc.Placed() || len(o.wins) == 0 {
		return false
	}
	classes := w.usable(o.job)
	if w.d.touches(classes, o.job.MaxPrice, o.reach, true) || w.d.lostGone(o.job, o.reach) {
		return false
	}
	for _, win := range o.wins {
		on := func(n int32) bool {
			c := w.p.nodeClass[n]
			return classes[c] && w.p.classes[c].speed >= win.tier
		}
		if w.d.hits(on, o.job.MaxPrice, win.from, win.to) {
			return false
		}
	}
	return true
}

package broker

import "lookahead/forecast"

// PartsCache keeps the planning input's node lists (ForParts) from one
// cycle to the next: while a job with a script waits and some site does
// not run parts, every cycle gives the planner every site's nodes with
// partsFeature on or off, and a site's list is copied and marked again
// only when its forecast is another one (otherwise each such cycle copies
// every node of every site: BenchmarkForParts). Unchanged lists come back
// as the same slices, so the incremental planner also knows them as the
// same without comparing them (coalloc's sameNodes). Its answers are
// ForParts' (the one rule: it keeps markNodes' results, nothing else).
// The zero value is ready; not safe for concurrent use (the broker's
// planning cycle owns it).
type PartsCache struct {
	sites map[string]cachedNodes
	cycle uint64 // counts the calls that marked node lists
}

type cachedNodes struct {
	key   partsKey
	nodes []forecast.Node
	cycle uint64 // the last call that used it
}

// partsKey tells the node lists to mark apart: the forecast (forecastKey:
// revision, generation, horizon and the node list itself, by its first
// element's address and length — a forecast decoded again, or a restarted
// agent's that numbers its revisions afresh, is never served the list of
// the one before, whatever its seq) and whether the site takes parts.
// The broker never changes a forecast it took (it replaces it), and the
// address kept here keeps the old list alive, so no other list can take
// its place.
type partsKey struct {
	forecastKey
	takes bool
}

// ForParts is ForParts, keeping the marked node lists for the next call.
// Sites that no longer come, and lists of forecasts replaced, are dropped
// at the next call that marks lists (until then the cache holds at most
// one list per site).
func (c *PartsCache) ForParts(fcs []forecast.Forecast, jobs []forecast.JobRequest, scripted map[string]bool) ([]forecast.Forecast, []forecast.JobRequest, []string) {
	marking := false
	outF, outJ, off := forParts(fcs, jobs, scripted, func(f *forecast.Forecast) []forecast.Node {
		if !marking {
			marking = true
			c.cycle++
		}
		return c.marked(f)
	})
	if marking {
		c.dropUnused()
	}
	return outF, outJ, off
}

// PlanCycle is PlanCycle with the planning node lists kept in c.
func (c *PartsCache) PlanCycle(in CycleInput, plan Planner) ([]forecast.Allocation, error) {
	return planCycle(in, plan, c.ForParts)
}

// marked is f's planning node list, from the cache when f's key is the
// one it was marked for.
func (c *PartsCache) marked(f *forecast.Forecast) []forecast.Node {
	k := partsKey{keyOf(f), f.TakesParts()}
	e, ok := c.sites[f.Site]
	if !ok || e.key != k {
		e = cachedNodes{key: k, nodes: markedNodes(f)}
	}
	e.cycle = c.cycle
	if c.sites == nil {
		c.sites = map[string]cachedNodes{}
	}
	c.sites[f.Site] = e
	return e.nodes
}

// dropUnused forgets the sites the last marking call did not see.
func (c *PartsCache) dropUnused() {
	for site, e := range c.sites {
		if e.cycle != c.cycle {
			delete(c.sites, site)
		}
	}
}

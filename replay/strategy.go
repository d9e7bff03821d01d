package replay

import (
	"sort"

	"lookahead/broker/coalloc"
	"lookahead/forecast"
)

// Pool is what a strategy needs from the co-allocation core: slots of some
// sites' forecasts from which jobs are placed one at a time, each seeing
// what the ones before it left. *coalloc.Pool satisfies it.
type Pool interface {
	Place(job forecast.JobRequest) forecast.Allocation
	// PlaceBounds is Place, also saying what the answer depended on in
	// time (see coalloc.Pool.PlaceBounds).
	PlaceBounds(job forecast.JobRequest) (a forecast.Allocation, lower, reach int64)
	// Try is Place without taking anything.
	Try(job forecast.JobRequest) forecast.Allocation
	// Take removes an allocation (tried or placed on this pool or another
	// over some of the same sites) as Place would; parts on sites the pool
	// does not hold are skipped.
	Take(job forecast.JobRequest, a forecast.Allocation) error
	// Remaining is what is left, one forecast per site in the pool's order.
	Remaining() []forecast.Forecast
}

// PoolFactory builds a pool over forecasts with the run's runtime model
// (multi-site factor, staging delay, speed tiers) that places nothing
// before notBefore.
type PoolFactory func(fcs []forecast.Forecast, notBefore int64) (Pool, error)

// SiteInfo is what strategies know of a site besides its forecast.
type SiteInfo struct {
	Name  string
	Procs int
	Speed float64
	Price float64 // the owner's base price
}

// Env is the broker's side of a run: how to build pools, and the sites.
type Env struct {
	NewPool PoolFactory
	// Order is the broker's priority order for the lookahead strategies
	// (coalloc.SortQueue); nil keeps the queue's order.
	Order func([]forecast.JobRequest) []forecast.JobRequest
	Sites []SiteInfo
	// Rebuild plans every cycle from scratch, the per-job strategies with
	// a new pool per job and site set (the first algorithm: the
	// benchmarks' baseline and the reference of the fast path's tests).
	Rebuild bool
	// memo, when set, is the per-job strategies' memory of their last
	// cycle in this run (nil: every cycle from scratch).
	memo *planMemo
	// incremental, when set, are the co-allocation core's options in the
	// queue order of Order: with a memo, the lookahead strategies plan with
	// coalloc.Incremental (the same answers as placing every job again).
	incremental *coalloc.Options
	// split is the split window's backlog kept over the cycles, for the
	// lookahead strategies' pools when they plan without the incremental
	// planner (lookahead.go, cycleBacklog).
	split *splitBacklog
}

// Strategy is a broker policy: given the forecasts and the grid queue at
// the start of a cycle, it returns one allocation per job, in the order it
// planned them (an allocation with Error set when the job found no room in
// the horizon). Strategies are pure and keep no state between cycles.
type Strategy interface {
	Name() string
	Plan(now int64, fcs []forecast.Forecast, queue []GridJob, env Env) ([]forecast.Allocation, error)
}

// Strategy names.
const (
	NameLookahead       = "lookahead"
	NameLookaheadStart  = "lookahead-start"
	NameLookaheadFinish = "lookahead-finish"
	NameLookaheadHeld   = "lookahead-held"
	NameLookaheadCheap  = "lookahead-cheap"
	NameSingleSite      = "single-site-earliest"
	NameGreedy          = "greedy-multisite"
	NameCheap           = "cheap"
	NameCheapSort       = "cheap-sort"
	NameMCT             = "mct"
	NameMCTSort         = "mct-sort"
)

var strategies = map[string]Strategy{
	NameLookahead:       lookahead{NameLookahead, forecast.FreeFirst},
	NameLookaheadHeld:   lookahead{NameLookaheadHeld, forecast.LeastHeld},
	NameLookaheadStart:  lookahead{NameLookaheadStart, forecast.EarliestStart},
	NameLookaheadFinish: lookahead{NameLookaheadFinish, forecast.EarliestFinish},
	NameLookaheadCheap:  lookahead{NameLookaheadCheap, forecast.Cheapest},
	NameSingleSite:      perJob{name: NameSingleSite, choose: chooseEarliestStart},
	NameGreedy:          perJob{name: NameGreedy, candidates: greedySets, choose: chooseEarliestEnd},
	NameCheap:           perJob{name: NameCheap, choose: chooseCheap},
	NameCheapSort:       perJob{name: NameCheapSort, choose: chooseCheap, byWidth: true},
	NameMCT:             perJob{name: NameMCT, choose: chooseEarliestEnd},
	NameMCTSort:         perJob{name: NameMCTSort, choose: chooseEarliestEnd, byWidth: true},
}

// StrategyByName returns the named strategy.
func StrategyByName(name string) (Strategy, bool) {
	s, ok := strategies[name]
	return s, ok
}

// StrategyNames lists the known strategies, sorted.
func StrategyNames() []string {
	out := make([]string, 0, len(strategies))
	for n := range strategies {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// fcfs orders the queue by submit time, then id (seeds 002 and 004 plan
// FCFS); byWidth puts the widest first (stable), seed 004's -SORT.
func fcfs(queue []GridJob, byWidth bool) []GridJob {
	out := append([]GridJob(nil), queue...)
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a].Req, out[b].Req
		if byWidth && x.Procs != y.Procs {
			return x.Procs > y.Procs
		}
		if x.Submitted != y.Submitted {
			return x.Submitted < y.Submitted
		}
		return x.ID < y.ID
	})
	return out
}

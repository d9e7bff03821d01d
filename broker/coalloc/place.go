package coalloc

import (
	"cmp"
	"math"
	"slices"

	"lookahead/forecast"
)

// Stable answers for jobs that get no allocation. A rejection is an answer:
// these strings are part of the contract (Allocation.Error).
const (
	// NoFitRequirements: no node of any site meets the job's min_speed,
	// mem_mb and features.
	NoFitRequirements = "no-fit: no node meets the job's speed, memory and feature requirements"
	// NoFitCapacity: nodes qualify, but at no start within the forecasts'
	// horizon are enough of their processors free at or below max_price on
	// at most max_sites sites.
	NoFitCapacity = "no-fit: not enough processors within max_price and max_sites at any start in the horizon"
	// InvalidPrefix starts the Error of a job request that fails validation.
	InvalidPrefix = "invalid: "
)

// candidate is the best start one sweep found.
type candidate struct {
	start, end int64 // end is start+dur: a bound on the realized end
	dur        int64
	sites      int
	tier       float64
	caps       []nodeCap
}

// Place plans one job on what the pool has left and removes what the
// allocation uses, so later jobs cannot use it. A job that does not fit
// gets an Allocation with Error set and changes nothing.
//
// Start is the earliest (earliest-start) or End the earliest
// (earliest-finish) over all feasible allocations when Options.Tiers is empty;
// ties go to the earlier finish (resp. start), then to fewer sites, then to
// the faster tier. See docs/coalloc.md for the node choice.
//
// The allocation holds its parts over [Start, End), End-Start being
// Options.Duration of the slowest chosen node and the number of sites.
// Each part takes the cheapest suitable processors of its node at every
// instant, and Cost is what they are worth: the sum over parts and over
// time of procs × seconds/3600 × the price of the slot actually used at
// that instant (so a hold over two abutting slots of prices 1 and 2 pays 1
// for the time on the first and 2 for the time on the second).
func (p *Pool) Place(job forecast.JobRequest) forecast.Allocation {
	pl, reason := p.selectJob(job)
	if reason != "" {
		return forecast.Allocation{Job: job.ID, Error: reason}
	}
	return p.commit(job, pl)
}

func (p *Pool) selectJob(job forecast.JobRequest) (plan, string) {
	if err := job.Validate(); err != nil {
		return plan{}, InvalidPrefix + err.Error()
	}
	exact := p.markBase(job)
	if len(exact) == 0 {
		return plan{}, NoFitRequirements
	}
	tiers := exact
	if len(p.opts.Tiers) > 0 {
		tiers = coarse(p.opts.Tiers, exact)
	}
	best, ok := p.bestCandidate(job, tiers)
	if !ok && len(tiers) < len(exact) {
		// Coarse tiers trade optimality, never feasibility.
		best, ok = p.bestCandidate(job, exact)
	}
	if !ok {
		return plan{}, NoFitCapacity
	}
	return p.choose(job, best), ""
}

// markBase marks the nodes that meet the job's requirements and returns
// the distinct speeds of those nodes, fastest first: the exact tiers.
func (p *Pool) markBase(job forecast.JobRequest) []float64 {
	p.ensureScratch()
	var speeds []float64
	for i, c := range p.classes {
		ok := c.speed >= job.MinSpeed && c.memMB >= job.MemMB && hasAll(c.features, job.Features)
		p.sc.classBase[i] = ok
		if ok && !slices.Contains(speeds, c.speed) {
			speeds = append(speeds, c.speed)
		}
	}
	slices.Sort(speeds)
	speeds = slices.Compact(speeds)
	slices.Reverse(speeds)
	return speeds
}

// coarse maps the configured tiers onto the exact ones (fastest first):
// each configured threshold becomes the slowest node speed at or above it
// (the same nodes, a shorter runtime), and the slowest speed is always a
// tier so that every node can be used.
func coarse(configured, exact []float64) []float64 {
	var out []float64
	for _, t := range configured {
		// exact is descending: the last speed >= t is the slowest one.
		i := len(exact) - 1
		for i >= 0 && exact[i] < t {
			i--
		}
		if i >= 0 {
			out = append(out, exact[i])
		}
	}
	out = append(out, exact[len(exact)-1])
	slices.Sort(out)
	out = slices.Compact(out)
	slices.Reverse(out)
	return out
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// bestCandidate runs the sweeps of every tier and keeps the best start by
// the job's criterion; later sweeps stop as soon as they cannot win.
func (p *Pool) bestCandidate(job forecast.JobRequest, tiers []float64) (candidate, bool) {
	finish := job.CriterionOrDefault() == forecast.EarliestFinish
	var best candidate
	found := false
	// Slowest tier first: it has every node, so it usually finds a start
	// early and bounds the sweeps of the faster tiers.
	for _, tier := range slices.Backward(tiers) {
		for _, sp := range p.specs(job, tier) {
			sp.limit = math.MaxInt64
			if found {
				sp.limit = best.start
				if finish {
					sp.limit = best.end - sp.dur
				}
			}
			t, ok := p.stage1(sp)
			if !ok {
				continue
			}
			c := candidate{start: t, end: addSat(t, sp.dur), dur: sp.dur, sites: sp.sites, tier: tier}
			if !found || better(c, best, finish) {
				c.caps = p.stage1Caps()
				best, found = c, true
			}
		}
	}
	return best, found
}

func better(a, b candidate, finish bool) bool {
	ka := [2]int64{a.start, a.end}
	kb := [2]int64{b.start, b.end}
	if finish {
		ka[0], ka[1], kb[0], kb[1] = a.end, a.start, b.end, b.start
	}
	if c := cmp.Compare(ka[0], kb[0]); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(ka[1], kb[1]); c != 0 {
		return c < 0
	}
	if a.sites != b.sites {
		return a.sites < b.sites
	}
	return a.tier > b.tier
}

// specs lists the sweeps one tier needs. The hold time depends on how many
// sites an allocation spans, so each distinct duration is its own sweep
// with its own site limit: one sweep when spanning costs nothing, two when
// only MultiSiteFactor applies, and one per site count when StagingDelay is
// set.
func (p *Pool) specs(job forecast.JobRequest, tier float64) []sweepSpec {
	k := job.MaxSites
	if k == 0 || k > len(p.sites) {
		k = len(p.sites)
	}
	mk := func(sites int) sweepSpec {
		return sweepSpec{procs: int64(job.Procs), dur: p.opts.Duration(job.Walltime, tier, sites),
			tier: tier, sites: sites, maxRank: p.maxRank(job.MaxPrice)}
	}
	one := mk(1)
	switch {
	case k <= 1:
		return []sweepSpec{one}
	case p.opts.StagingDelay == 0 && p.opts.Duration(job.Walltime, tier, 2) == one.dur:
		return []sweepSpec{mk(k)}
	case p.opts.StagingDelay == 0:
		return []sweepSpec{one, mk(k)}
	}
	out := []sweepSpec{one}
	for m := 2; m <= k; m++ {
		out = append(out, mk(m))
	}
	return out
}

// SortQueue orders jobs by priority in place: max_price descending, then
// submitted ascending, then id ascending.
// Jobs equal on all three keep their order.
func SortQueue(jobs []forecast.JobRequest) {
	slices.SortStableFunc(jobs, queueCmp)
}

func queueCmp(a, b forecast.JobRequest) int {
	if c := cmp.Compare(b.MaxPrice, a.MaxPrice); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Submitted, b.Submitted); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// PlanQueue builds a pool from the forecasts, plans the jobs in priority
// order (SortQueue) each on what the jobs before it left, and returns one
// allocation per job in the input order. The error is for bad forecasts or
// options only; jobs that do not fit get Allocation.Error.
func PlanQueue(forecasts []forecast.Forecast, jobs []forecast.JobRequest, opts Options) ([]forecast.Allocation, error) {
	p, err := NewPool(forecasts, opts)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return queueCmp(jobs[a], jobs[b]) })
	out := make([]forecast.Allocation, len(jobs))
	for _, i := range order {
		out[i] = p.Place(jobs[i])
	}
	return out, nil
}

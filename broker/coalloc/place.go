package coalloc

import (
	"cmp"
	"fmt"
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
// The job's criterion (its own, else Options.Criterion, else free-first)
// ranks the feasible allocations; with Options.Tiers empty the answer is
// optimal by it. earliest-start: Start the earliest; earliest-finish: End
// the earliest; ties go to the earlier finish (resp. start), then to fewer
// sites, then to the slower tier (the same hold: the durations are rounded
// up to the second, so two speeds can hold alike; the slower tier's nodes
// include the faster one's, so its cheapest processors cost no more). least-held: among the allocations ending
// within Options.Tolerance × walltime of the earliest End, the least work
// held, then the earliest End, the fewest sites, the cheapest (see
// leastheld.go). free-first: least-held over free time first (see
// freefirst.go). Allocation.Why says why the answer won. See
// docs/coalloc.md for the node choice.
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
	crit := p.criterion(job)
	if crit == forecast.LeastHeld || crit == forecast.FreeFirst || crit == forecast.Cheapest {
		return p.selectLeastHeld(job, tiers, exact, crit)
	}
	finish := crit == forecast.EarliestFinish
	best, ok := p.bestCandidate(job, tiers, finish)
	if !ok && len(tiers) < len(exact) {
		// Coarse tiers trade optimality, never feasibility.
		best, ok = p.bestCandidate(job, exact, finish)
	}
	if !ok {
		return plan{}, NoFitCapacity
	}
	pl := p.choose(job, best)
	pl.why = whyEarliest(crit)
	return pl, ""
}

// criterion is the job's criterion: its own, else the pool's default for
// jobs that omit one, else forecast.DefaultCriterion.
func (p *Pool) criterion(job forecast.JobRequest) string {
	switch {
	case job.Criterion != "":
		return job.Criterion
	case p.opts.Criterion != "":
		return p.opts.Criterion
	}
	return forecast.DefaultCriterion
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
//
// A bound sweep runs first: every node any tier may use, the shortest
// duration of any sweep and the largest site limit. Whatever is feasible
// for a sweep of the job is feasible for it (more nodes, a shorter window,
// more sites), so its start t0 is a lower bound on every sweep's start:
// when it fails the job does not fit, and otherwise every sweep begins at
// t0 from the node values it recorded there instead of at NotBefore.
func (p *Pool) bestCandidate(job forecast.JobRequest, tiers []float64, finish bool) (candidate, bool) {
	specs := p.allSpecs(job, tiers)
	var from *startState
	if len(specs) > 1 {
		ok := false
		if from, ok = p.boundSweep(specs); !ok {
			return candidate{}, false
		}
	}
	var best candidate
	found := false
	for _, sp := range specs {
		sp.limit, sp.from = math.MaxInt64, from
		if found {
			sp.limit = limitFor(sp, best, finish)
		}
		t, ok := p.stage1(sp)
		if !ok {
			continue
		}
		c := candidate{start: t, end: addSat(t, sp.dur), dur: sp.dur, sites: sp.sites, tier: sp.tier}
		if !found || better(c, best, finish) {
			c.caps = p.stage1Caps()
			best, found = c, true
		}
	}
	return best, found
}

// allSpecs lists the sweeps of every tier: the slowest tier first (it has
// every node, so it usually finds a start early and bounds the others),
// then the fastest first, since at the same start a faster tier ends
// sooner and so rules the slower ones out.
func (p *Pool) allSpecs(job forecast.JobRequest, tiers []float64) []sweepSpec {
	specs := p.specs(job, tiers[len(tiers)-1])
	for _, tier := range tiers[:len(tiers)-1] {
		specs = append(specs, p.specs(job, tier)...)
	}
	return specs
}

// boundSweep runs the bound sweep of the given sweeps: it reports false
// when none of them can be feasible, else the state they may start from
// (nil when the stage 1 in use records none).
func (p *Pool) boundSweep(specs []sweepSpec) (*startState, bool) {
	bound := specs[0]
	for _, sp := range specs[1:] {
		bound.tier = min(bound.tier, sp.tier)
		bound.dur = min(bound.dur, sp.dur)
		bound.sites = max(bound.sites, sp.sites)
	}
	bound.limit, bound.track = math.MaxInt64, true
	p.sc.snap.ok = false
	if _, ok := p.stage1(bound); !ok {
		return nil, false
	}
	if !p.sc.snap.ok {
		return nil, true
	}
	return &p.sc.snap, true
}

// limitFor is the latest start at which sweep sp can still beat best: a
// sweep finds its earliest feasible start, and a candidate of sp at start t
// beats best exactly when (t, t+dur, sites, tier) ranks before best's key
// (earliest-finish: (t+dur, t, sites, tier)). At the boundary instant the
// rest of the key decides whether that instant is still worth looking at.
func limitFor(sp sweepSpec, best candidate, finish bool) int64 {
	t := best.start
	if finish {
		t = best.end - sp.dur
	}
	c := candidate{start: t, end: addSat(t, sp.dur), sites: sp.sites, tier: sp.tier}
	if better(c, best, finish) {
		return t
	}
	return t - 1
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
	// The same start, end and sites: the same hold, so the slower tier,
	// whose nodes include the faster one's, can only pay less.
	return a.tier < b.tier
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
	rank := p.maxRank(job.MaxPrice)
	if p.cut != nil {
		rank = slices.Max(p.cut)
	}
	mk := func(sites int) sweepSpec {
		return sweepSpec{procs: int64(job.Procs), dur: p.opts.Duration(job.Walltime, tier, sites),
			tier: tier, sites: sites, maxRank: rank, siteRank: p.cut}
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

// Try is Place without taking anything: the allocation Place would return
// now, the pool left as it was. A caller comparing several pools (the
// replay's per-job strategies) tries the job on each and takes it on the
// ones it chose with Take.
func (p *Pool) Try(job forecast.JobRequest) forecast.Allocation {
	pl, reason := p.selectJob(job)
	if reason != "" {
		return forecast.Allocation{Job: job.ID, Error: reason}
	}
	a, _ := p.price(job, pl)
	return a
}

// Take removes a placed allocation's processors from the pool as Place
// would have: on each part's node, the cheapest levels at or below the
// job's max_price at every instant of [Start, End). The allocation may come
// from another pool (Try or Place there): parts on sites this pool does not
// hold are skipped, so pools over overlapping site sets stay the same on
// the sites they share. It fails, taking nothing, when a part names a node
// the pool's site lacks or more processors than the node has left.
func (p *Pool) Take(job forecast.JobRequest, a forecast.Allocation) error {
	pl := plan{start: a.Start, end: a.End}
	for _, part := range a.Parts {
		n, held, ok := p.nodeByName(part.Site, part.Node)
		if !held {
			continue
		}
		if !ok {
			return fmt.Errorf("coalloc: take %s: %w: no node %q on site %q", a.Job, forecast.ErrInvalid, part.Node, part.Site)
		}
		pl.takes = append(pl.takes, take{node: n, procs: int64(part.Procs)})
	}
	taken := make([][]piece, len(pl.takes))
	for i, t := range pl.takes {
		segs := p.profile(t.node, pl.start, pl.end, job.MaxPrice)
		for _, s := range segs {
			if s.total() < t.procs {
				return fmt.Errorf("coalloc: take %s: %w: node %q has fewer than %d processors left over [%d, %d)", a.Job, forecast.ErrInvalid, p.nodes[t.node].name, t.procs, pl.start, pl.end)
			}
		}
		taken[i], _ = takeCheapest(segs, t.procs)
	}
	p.apply(pl, taken)
	return nil
}

// nodeByName finds a node by site and name; held says the pool has the
// site at all.
func (p *Pool) nodeByName(siteName, nodeName string) (n int32, held, ok bool) {
	for _, s := range p.sites {
		if s.fc.Site != siteName {
			continue
		}
		for _, i := range s.nodes {
			if p.nodes[i].name == nodeName {
				return i, true, true
			}
		}
		return 0, true, false
	}
	return 0, false, false
}

// PlaceBounds is Place, also saying what the answer depended on in time:
// no feasible allocation of the job starts before lower (MaxInt64 when
// none was found), and no search read slot time at or after reach. Placed
// again on a pool whose NotBefore is at most lower and whose slots before
// reach are the same, the job gets the same answer (the incremental
// planner's rule; TestIncrementalSameAnswers checks it).
func (p *Pool) PlaceBounds(job forecast.JobRequest) (a forecast.Allocation, lower, reach int64) {
	var o observer
	a = p.placeWatched(job, &o)
	return a, o.lower, o.reach
}

package replay

import (
	"fmt"
	"sort"

	"lookahead/forecast"
)

// lookahead is the co-allocation core over every site's slots: one pool per
// cycle, jobs in the broker's priority order (Env.Order), each job seeing
// what the ones before it left.
type lookahead struct{ name, criterion string }

func (l lookahead) Name() string { return l.name }

func (l lookahead) Plan(now int64, fcs []forecast.Forecast, queue []GridJob, env Env) ([]forecast.Allocation, error) {
	reqs := make([]forecast.JobRequest, len(queue))
	for i, j := range queue {
		reqs[i] = j.Req
		reqs[i].Criterion = l.criterion
		if l.criterion == forecast.Cheapest {
			reqs[i].Deadline = j.Deadline // the user's bound (grid.deadline)
		}
	}
	if env.Order != nil {
		reqs = env.Order(reqs)
	}
	if env.memo != nil && !env.Rebuild && env.incremental != nil {
		out, err := l.planIncremental(now, fcs, reqs, env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name(), err)
		}
		return out, nil
	}
	if env.memo != nil && !env.Rebuild {
		out, err := l.planKept(now, fcs, reqs, env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name(), err)
		}
		return out, nil
	}
	cycleBacklog(now, fcs, reqs, env)
	pool, err := env.NewPool(fcs, now)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name(), err)
	}
	pool = withBacklog(pool, env)
	out := make([]forecast.Allocation, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, pool.Place(r))
	}
	return out, nil
}

// perJob strategies place one job at a time: for every candidate set of
// sites they place the job on those sites' slots alone, pick one candidate,
// and take its processors out of the forecasts before the next job.
type perJob struct {
	name       string
	byWidth    bool
	candidates func(job GridJob, env Env) [][]int // site sets; nil: each site alone
	choose     func(job GridJob, cands []candidate, env Env) int
}

type candidate struct {
	sites []int
	alloc forecast.Allocation
	pool  Pool // the pool the candidate was placed in (what is left after it)
}

func (p perJob) Name() string { return p.name }

func (p perJob) Plan(now int64, fcs []forecast.Forecast, queue []GridJob, env Env) ([]forecast.Allocation, error) {
	if env.Rebuild {
		return p.planRebuild(now, fcs, queue, env)
	}
	return p.planShared(now, fcs, queue, env)
}

// planRebuild is the per-job plan as first written: for every job and
// site set a new pool over what the jobs before it left. It is the
// reference planShared is tested against and the benchmarks' baseline.
func (p perJob) planRebuild(now int64, fcs []forecast.Forecast, queue []GridJob, env Env) ([]forecast.Allocation, error) {
	fcs = append([]forecast.Forecast(nil), fcs...)
	out := make([]forecast.Allocation, 0, len(queue))
	for _, job := range fcfs(queue, p.byWidth) {
		cands, err := place(now, fcs, job, p.sets(job, env), env)
		if err != nil {
			return nil, fmt.Errorf("%s: job %s: %w", p.name, job.Req.ID, err)
		}
		pick := p.choose(job, cands, env)
		if pick < 0 {
			out = append(out, forecast.Allocation{Job: job.Req.ID, Error: noRoom(cands)})
			continue
		}
		c := cands[pick]
		for k, f := range c.pool.Remaining() {
			fcs[c.sites[k]] = f
		}
		out = append(out, c.alloc)
	}
	return out, nil
}

func (p perJob) sets(job GridJob, env Env) [][]int {
	if p.candidates != nil {
		return p.candidates(job, env)
	}
	return singleSites(len(env.Sites))
}

func singleSites(n int) [][]int {
	out := make([][]int, n)
	for i := range out {
		out[i] = []int{i}
	}
	return out
}

// place tries the job on every site set; forecasts are in site order.
func place(now int64, fcs []forecast.Forecast, job GridJob, sets [][]int, env Env) ([]candidate, error) {
	out := make([]candidate, 0, len(sets))
	for _, set := range sets {
		pool, err := env.NewPool(subset(fcs, set), now)
		if err != nil {
			return nil, err
		}
		out = append(out, candidate{sites: set, alloc: pool.Place(setRequest(job, set)), pool: pool})
	}
	return out, nil
}

func subset(fcs []forecast.Forecast, set []int) []forecast.Forecast {
	sub := make([]forecast.Forecast, len(set))
	for k, i := range set {
		sub[k] = fcs[i]
	}
	return sub
}

// setRequest is the job as placed on one site set: earliest finish, on at
// most the set's sites.
func setRequest(job GridJob, set []int) forecast.JobRequest {
	req := job.Req
	req.Criterion = forecast.EarliestFinish
	req.MaxSites = len(set)
	if job.Req.MaxSites > 0 {
		req.MaxSites = min(len(set), job.Req.MaxSites)
	}
	return req
}

func noRoom(cands []candidate) string {
	for _, c := range cands {
		if c.alloc.Error != "" {
			return c.alloc.Error
		}
	}
	return "no site set can hold the job"
}

// better orders placed candidates by key, then start, then candidate order.
func pickBest(cands []candidate, ok func(candidate) bool, key func(forecast.Allocation) int64) int {
	best := -1
	for i, c := range cands {
		if !c.alloc.Placed() || (ok != nil && !ok(c)) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := cands[best].alloc
		if k, kb := key(c.alloc), key(b); k < kb || (k == kb && c.alloc.Start < b.Start) {
			best = i
		}
	}
	return best
}

func end(a forecast.Allocation) int64 { return a.End }

// chooseEarliestStart: the site with the earliest forecast start (then the
// earliest end).
func chooseEarliestStart(_ GridJob, cands []candidate, _ Env) int {
	best := -1
	for i, c := range cands {
		if !c.alloc.Placed() {
			continue
		}
		if best < 0 || c.alloc.Start < cands[best].alloc.Start ||
			(c.alloc.Start == cands[best].alloc.Start && c.alloc.End < cands[best].alloc.End) {
			best = i
		}
	}
	return best
}

// chooseEarliestEnd is MCT: the minimum completion time.
func chooseEarliestEnd(_ GridJob, cands []candidate, _ Env) int {
	return pickBest(cands, nil, end)
}

// chooseCheap is seed 004's CHEAP: the cheapest site (base price) whose
// completion meets the job's deadline; when none does, MCT's choice.
func chooseCheap(job GridJob, cands []candidate, env Env) int {
	meets := func(c candidate) bool { return job.Deadline == 0 || c.alloc.End <= job.Deadline }
	price := func(a forecast.Allocation) int64 {
		p := 0.0
		for _, s := range a.Sites() {
			for _, info := range env.Sites {
				if info.Name == s {
					p = max(p, info.Price)
				}
			}
		}
		return int64(p * 1e6)
	}
	if i := pickBest(cands, meets, price); i >= 0 {
		return i
	}
	return chooseEarliestEnd(job, cands, env)
}

// greedySets is seed 002's greedy resource selection (algorithm 3, step 3):
// sites sorted by heterogeneity factor ascending (speed descending, then
// scenario order); for l = 1..N the first l sites, where while their
// processors are fewer than the job's the site with the fewest is dropped
// and the next site in the order added.
func greedySets(job GridJob, env Env) [][]int {
	order := make([]int, len(env.Sites))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return env.Sites[order[a]].Speed > env.Sites[order[b]].Speed })
	var out [][]int
	for l := 1; l <= len(order); l++ {
		set := append([]int(nil), order[:l]...)
		next := l
		for procsOf(set, env) < job.Req.Procs && next < len(order) {
			set = append(dropSmallest(set, env), order[next])
			next++
		}
		if procsOf(set, env) >= job.Req.Procs {
			out = append(out, set)
		}
	}
	return out
}

func procsOf(set []int, env Env) int {
	n := 0
	for _, i := range set {
		n += env.Sites[i].Procs
	}
	return n
}

func dropSmallest(set []int, env Env) []int {
	k := 0
	for i := range set {
		if env.Sites[set[i]].Procs < env.Sites[set[k]].Procs {
			k = i
		}
	}
	return append(append([]int(nil), set[:k]...), set[k+1:]...)
}

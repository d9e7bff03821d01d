package daemon

import (
	"sync"

	"lookahead/broker/coalloc"
	"lookahead/forecast"
)

// PlannerOptions tune the co-allocation core (see broker/coalloc.Options).
type PlannerOptions struct {
	Tiers           []float64
	MultiSiteFactor float64
	StagingDelay    int64
	// Criterion is the criterion of jobs that omit one ("": free-first);
	// Tolerance is least-held's (free-first ranks with it too), a fraction
	// of a job's walltime.
	Criterion string
	Tolerance float64
	// FreeTolerance is free-first's window for free time, a fraction of a
	// job's walltime.
	FreeTolerance float64
	// FreeWindow is what FreeTolerance counts from (coalloc.Options.FreeWindow).
	FreeWindow string
	// Order is the queue order (coalloc.Options.Order: "" is
	// coalloc.DefaultOrder, fcfs); Aging is OrderAging's rate in seconds
	// of waiting per credit (coalloc.Options.Aging). The broker commits
	// and names the order the planner plans in (Config.Queue).
	Order string
	Aging float64
	// SplitBacklog widens least-held's window for one site by the grid's
	// backlog (coalloc.Options.SplitBacklog; 0: off).
	SplitBacklog float64
}

// Planner is the co-allocation core bound as the broker's planner: the
// whole queue is planned in the options' order (fcfs by default) on
// one pool of every fresh
// site's slots, no allocation starting before notBefore. It keeps the
// last cycle's answers (coalloc.Incremental), so a cycle re-plans only
// the jobs whose answer may have changed; the answers are those of
// planning from scratch. Safe for concurrent use (calls are serialized).
type Planner struct {
	mu   sync.Mutex
	opts coalloc.Options
	inc  *coalloc.Incremental
	err  error
	last coalloc.Stats
}

// NewPlanner returns a planner with the given options.
func NewPlanner(o PlannerOptions) *Planner {
	opts := coalloc.Options{Tiers: o.Tiers, MultiSiteFactor: o.MultiSiteFactor,
		StagingDelay: o.StagingDelay, Criterion: o.Criterion, Tolerance: o.Tolerance, FreeTolerance: o.FreeTolerance, FreeWindow: o.FreeWindow,
		Order: o.Order, Aging: o.Aging, SplitBacklog: o.SplitBacklog}
	inc, err := coalloc.NewIncremental(opts)
	return &Planner{opts: opts, inc: inc, err: err}
}

// Explain is coalloc.Explain with the planner's options: why the job gets
// no allocation on fcs from notBefore and what would help. Safe for
// concurrent use (it reads only the options).
func (p *Planner) Explain(fcs []forecast.Forecast, job forecast.JobRequest, notBefore int64) string {
	o := p.opts
	o.NotBefore = notBefore
	return coalloc.Explain(fcs, job, o)
}

// ExplainLater says why a job planned at a.Start, later than notBefore,
// cannot start at notBefore (explainLater with the planner's options).
// Safe for concurrent use (it reads only the options).
func (p *Planner) ExplainLater(fcs []forecast.Forecast, job forecast.JobRequest, a forecast.Allocation, notBefore int64) string {
	o := p.opts
	o.NotBefore = notBefore
	return explainLater(fcs, job, a, o)
}

// Order is the queue order the planner plans in (a Queue): its options'
// Order, coalloc.DefaultOrder when empty.
func (p *Planner) Order() string { return p.opts.QueueOrder() }

// SortQueue orders jobs in place in the planner's queue order (a Queue).
func (p *Planner) SortQueue(jobs []forecast.JobRequest) { p.opts.SortQueue(jobs) }

// Plan is a broker.Planner.
func (p *Planner) Plan(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) ([]forecast.Allocation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	out, st, err := p.inc.Plan(fcs, jobs, notBefore)
	p.last = st
	return out, err
}

// TakeStats returns what the plans since the last call re-planned (the
// last plan's figures) and forgets them.
func (p *Planner) TakeStats() coalloc.Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.last
	p.last = coalloc.Stats{}
	return st
}

// UsePlanner makes p the broker's planner: it plans (Planner), says why
// (Explain, ExplainLater), counts what it re-planned (PlanStats) and is
// the queue order the broker commits in and names (Queue), so that none
// of them can disagree with another.
func (c *Config) UsePlanner(p *Planner) {
	c.Planner, c.Explain, c.ExplainLater, c.PlanStats, c.Queue = p.Plan, p.Explain, p.ExplainLater, p.TakeStats, p
}

package coalloc

import (
	"cmp"
	"slices"

	"lookahead/forecast"
)

// DefaultOrder is the queue order of an empty Options.Order, and so of the
// broker, `lookahead plan` and the replay unless told otherwise: first
// come, first served (docs/replay.md, "Issue 33's study", says why).
const DefaultOrder = OrderFCFS

// QueueOrder is the queue order the options plan in: Order, or
// DefaultOrder when it is empty.
func (o Options) QueueOrder() string {
	if o.Order == "" {
		return DefaultOrder
	}
	return o.Order
}

// SortQueue orders jobs in place in the options' queue order (Order and
// Aging), the order PlanQueue and Incremental plan them in; jobs equal on
// its keys keep their order. The default, fcfs, is submitted ascending,
// then id ascending.
func (o Options) SortQueue(jobs []forecast.JobRequest) {
	slices.SortStableFunc(jobs, o.jobCmp())
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

// PlanQueue builds a pool from the forecasts, plans the jobs in the
// options' queue order (Options.Order; by default fcfs, SortQueue)
// each on what the jobs before it left, and returns one
// allocation per job in the input order. The error is for bad forecasts or
// options only; jobs that do not fit get Allocation.Error.
//
// It is one cycle of Incremental: the same answers as placing each job in
// turn with Pool.Place, but a job that asks at least as much as one that
// did not fit earlier gets its no-fit answer without a sweep.
func PlanQueue(forecasts []forecast.Forecast, jobs []forecast.JobRequest, opts Options) ([]forecast.Allocation, error) {
	in, err := NewIncremental(opts)
	if err != nil {
		return nil, err
	}
	out, _, err := in.Plan(forecasts, jobs, opts.NotBefore)
	return out, err
}

// PlanEach is PlanQueue without anything kept or skipped: one pool, every
// job placed in turn with Pool.Place. It is the reference the incremental
// planner is tested against and the baseline of the benchmarks (the
// algorithm before issue 21).
func PlanEach(forecasts []forecast.Forecast, jobs []forecast.JobRequest, opts Options) ([]forecast.Allocation, error) {
	p, err := NewPool(forecasts, opts)
	if err != nil {
		return nil, err
	}
	if opts.SplitBacklog > 0 {
		p.backlog = Backlog(forecasts, jobs, opts.NotBefore)
	}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	queueCmp := opts.jobCmp()
	slices.SortStableFunc(order, func(a, b int) int { return queueCmp(jobs[a], jobs[b]) })
	out := make([]forecast.Allocation, len(jobs))
	for _, i := range order {
		out[i] = p.Place(jobs[i])
	}
	return out, nil
}

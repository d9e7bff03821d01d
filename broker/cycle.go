package broker

import (
	"fmt"

	"lookahead/forecast"
)

// Planner places a queue of jobs, in the given order, onto the slots of the
// forecasts, no earlier than notBefore; one allocation per job, in order.
// The default is the co-allocation core (broker/coalloc) bound in the
// daemon; tests may pass another. It must honour the jobs' requirements
// (features included: ForParts keeps jobs with a script on the sites that
// run parts through one).
type Planner func(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) ([]forecast.Allocation, error)

// CycleInput is what one planning cycle sees: the world as it was at Now.
type CycleInput struct {
	Now       int64
	Forecasts []forecast.Forecast // fresh forecasts only
	Holds     []Hold              // what committing/reserved/running jobs hold
	Jobs      []forecast.JobRequest
	// Scripted holds the IDs of the jobs with a script (the broker
	// dispatches their parts): they are planned only on sites that run
	// parts (ForParts).
	Scripted map[string]bool
}

// PlanCycle plans every waiting job in the given (queue) order on the
// forecasts minus the holds. It returns one allocation per job, in order.
func PlanCycle(in CycleInput, plan Planner) ([]forecast.Allocation, error) {
	return planCycle(in, plan, ForParts)
}

// partsRule is ForParts, or a PartsCache's.
type partsRule func(fcs []forecast.Forecast, jobs []forecast.JobRequest, scripted map[string]bool) ([]forecast.Forecast, []forecast.JobRequest, []string)

// planCycle is PlanCycle with the jobs with a script kept on the sites
// that run parts by forParts.
func planCycle(in CycleInput, plan Planner, forParts partsRule) ([]forecast.Allocation, error) {
	if len(in.Jobs) == 0 {
		return nil, nil
	}
	if len(in.Forecasts) == 0 {
		out := make([]forecast.Allocation, len(in.Jobs))
		for i, j := range in.Jobs {
			out[i] = forecast.Allocation{Job: j.ID, Error: "no site has a fresh forecast"}
		}
		return out, nil
	}
	fcs := ApplyHolds(in.Forecasts, in.Holds, in.Now)
	pfcs, jobs, off := forParts(fcs, in.Jobs, in.Scripted)
	allocs, err := plan(pfcs, jobs, in.Now)
	if err != nil {
		return nil, fmt.Errorf("plan %d jobs over %d sites: %w", len(in.Jobs), len(fcs), err)
	}
	if len(allocs) != len(in.Jobs) {
		return nil, fmt.Errorf("planner returned %d allocations for %d jobs", len(allocs), len(in.Jobs))
	}
	notPartsFit(allocs, in.Jobs, in.Scripted, fcs, off)
	return allocs, nil
}

// Revisions maps each forecast's site to its Seq: what a plan made on these
// forecasts names in its reserve requests.
func Revisions(fcs []forecast.Forecast) map[string]uint64 {
	out := make(map[string]uint64, len(fcs))
	for _, f := range fcs {
		out[f.Site] = f.Seq
	}
	return out
}

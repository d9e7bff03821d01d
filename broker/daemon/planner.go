package daemon

import (
	"lookahead/broker"
	"lookahead/broker/coalloc"
	"lookahead/forecast"
)

// PlannerOptions tune the co-allocation core (see broker/coalloc.Options).
type PlannerOptions struct {
	Tiers           []float64
	MultiSiteFactor float64
	StagingDelay    int64
	// Criterion is the criterion of jobs that omit one ("": least-held);
	// Tolerance is least-held's, a fraction of a job's walltime.
	Criterion string
	Tolerance float64
}

// CoallocPlanner binds the co-allocation core as the broker's planner: the
// whole queue is planned in priority order on one pool of every fresh
// site's slots, no allocation starting before notBefore.
func CoallocPlanner(o PlannerOptions) broker.Planner {
	return func(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) ([]forecast.Allocation, error) {
		return coalloc.PlanQueue(fcs, jobs, coalloc.Options{Tiers: o.Tiers, MultiSiteFactor: o.MultiSiteFactor,
			StagingDelay: o.StagingDelay, NotBefore: notBefore, Criterion: o.Criterion, Tolerance: o.Tolerance})
	}
}

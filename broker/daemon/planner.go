package daemon

import (
	"fmt"

	"lookahead/broker"
	"lookahead/forecast"
)

// PlannerOptions tune the co-allocation core (see broker/coalloc).
type PlannerOptions struct {
	Tiers           []float64
	MultiSiteFactor float64
	StagingDelay    int64
}

// CoallocPlanner binds the co-allocation core as the broker's planner.
func CoallocPlanner(o PlannerOptions) broker.Planner {
	return func(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) ([]forecast.Allocation, error) {
		return nil, fmt.Errorf("the co-allocation core is not built in")
	}
}

package coalloc

import (
	"fmt"

	"lookahead/forecast"
)

// MaxInstant bounds every time in a forecast the planner takes (slot
// edges, generated, horizon): the model's limit (forecast.MaxInstant,
// docs/formats.md), so that no difference of two instants overflows.
const MaxInstant = forecast.MaxInstant

// maxNodeProcs bounds a node's processors so that edge deltas fit in int32
// (forecast.MaxProcs).
const maxNodeProcs = forecast.MaxProcs

// ValidateForecast checks one forecast against the v1 contract and the
// planner's own limits. NewPool refuses a forecast exactly when this does,
// so a broker that validates each site's forecast with it on arrival never
// hands the planner a forecast that makes it refuse the whole queue.
func ValidateForecast(f *forecast.Forecast) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if f.Generated < 0 || f.Horizon > MaxInstant {
		return fmt.Errorf("%w: generated %d, horizon %d: must lie in [0, %d]", forecast.ErrInvalid, f.Generated, f.Horizon, MaxInstant)
	}
	for i, n := range f.Nodes {
		if n.Procs > maxNodeProcs {
			return fmt.Errorf("%w: nodes[%d].procs: %d, at most %d supported", forecast.ErrInvalid, i, n.Procs, maxNodeProcs)
		}
	}
	for i, s := range f.Slots {
		if s.Start < 0 || s.End > MaxInstant {
			return fmt.Errorf("%w: slots[%d]: [%d, %d) must lie in [0, %d]", forecast.ErrInvalid, i, s.Start, s.End, MaxInstant)
		}
	}
	return nil
}

package maui

// StepPolicy decides how far the simulated clock advances at each Maui
// iteration. Maui completes a job at the first iteration at or after its
// end, so a fixed step delays every end and changes the whole schedule.
// Inside the near window [0, Near) (seconds from the forecast start) the
// policy stops exactly at the next known event (a job end, a reservation
// boundary), which reproduces the event-exact schedule there; beyond it the
// clock moves in fixed Coarse steps, run by Maui without client round trips.
type StepPolicy struct {
	Near   int64 // exact-stepping window, seconds (0: 12 h; negative: none)
	Coarse int64 // step beyond the window, seconds (default 300)
	// Plain stops at every known event inside the window. By default the
	// built-in simulator's schedule of the same traces is the plan: Maui
	// stops only where it predicts a start (Oracle.Plan), and a run where
	// Maui departs from it is repeated plainly.
	Plain bool
	// StopEach keeps the plan but stops Maui at every batch of it (a
	// 50 ms sleep each) instead of letting it run through (sim_free.go).
	StopEach bool
}

// Defaults for StepPolicy.
const (
	DefaultNear   = 12 * 3600
	DefaultCoarse = 300
)

// WithDefaults fills unset fields.
func (p StepPolicy) WithDefaults() StepPolicy {
	if p.Near == 0 {
		p.Near = DefaultNear
	}
	if p.Coarse <= 0 {
		p.Coarse = DefaultCoarse
	}
	return p
}

// Next returns the next stop after t given the earliest known future event
// (ok false when none is known) and the horizon, and whether that stop is
// exact. Pure.
func (p StepPolicy) Next(t, event int64, ok bool, horizon int64) (stop int64, exact bool) {
	p = p.WithDefaults()
	if ok && event > t && event < p.Near && event <= horizon {
		return event, true
	}
	return min(t+p.Coarse, max(horizon, t+1)), false
}

// CanPipeline reports whether the step to next may be sent without first
// reading which jobs started at the current iteration t: every job not yet
// seen running needs at least minRun seconds, so none of them can end
// before next. Pure.
func CanPipeline(t, next, minRun int64) bool { return next < t+minRun }

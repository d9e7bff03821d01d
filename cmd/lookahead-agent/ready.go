package main

import (
	"context"
	"fmt"
	"time"

	"lookahead/agent"
	"lookahead/internal/metrics"
)

// Readiness bounds: the agent stops being ready when its last failFor
// cycles failed, or when its last published forecast (or heartbeat, which
// says the forecast is still right) is older than staleAfter refresh
// intervals — every cycle publishes one of them, so an older one means the
// cycles fail or do not run.
const (
	failFor    = 3
	staleAfter = 3
)

// readiness is /readyz's answer for the agent's status at now, with
// refresh the agent's longest interval between cycles.
func readiness(st agent.Status, now time.Time, refresh time.Duration) (bool, string) {
	switch {
	case st.LastPublish == 0 && st.LastError != "":
		return false, "no forecast yet: " + st.LastError
	case st.LastPublish == 0:
		return false, "no forecast yet"
	case st.Failures >= failFor:
		return false, fmt.Sprintf("the last %d forecasts failed: %s", st.Failures, st.LastError)
	}
	age := now.Sub(time.Unix(st.LastPublish, 0))
	if bound := staleAfter * refresh; refresh > 0 && age > bound {
		why := fmt.Sprintf("last forecast published %s ago (bound %s)", age.Round(time.Second), bound)
		if st.LastError != "" {
			why += ": " + st.LastError
		}
		return false, why
	}
	return true, ""
}

// watchReady marks the daemon ready once its first forecast is out, and
// not ready again while forecasts fail (see readiness).
func watchReady(ctx context.Context, a *agent.Agent, s *metrics.Server, refresh time.Duration) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if ok, why := readiness(a.Status(), time.Now(), refresh); ok {
			s.SetReady()
		} else {
			s.SetNotReady(why)
		}
	}
}

package agent

import (
	"context"
	"fmt"
	"time"

	"lookahead/forecast"
)

// built is one forecast with what it was made from.
type built struct {
	snap        forecast.Snapshot
	forecast    forecast.Forecast
	predictions []forecast.Prediction
}

// build takes a snapshot and runs the engine on it, under BuildTimeout.
// It also feeds the accuracy recorder (jobs that started since the last
// snapshot are scored, new predictions remembered) and reports grid jobs'
// parts that started or finished.
func (a *Agent) build(ctx context.Context, now time.Time) (built, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.BuildTimeout)
	defer cancel()
	b, err := a.forecastFresh(ctx, now, a.deps.Engine)
	if err != nil {
		return b, err
	}
	for _, s := range a.acc.Observe(b.snap, b.predictions) {
		a.met.StartError(time.Unix(s.Predicted, 0), time.Unix(s.Actual, 0))
	}
	a.setQueue(b)
	a.reportGridJobs(ctx, b.snap, now.Unix())
	a.followParts(ctx, now.Unix())
	a.mu.Lock()
	a.builds++
	a.mu.Unlock()
	return b, nil
}

// forecastFresh is snapshot → engine with the site name and generation
// time stamped; the reserve path uses it for its re-check.
func (a *Agent) forecastFresh(ctx context.Context, now time.Time, eng Engine) (built, error) {
	snap, err := a.snapshot(ctx)
	if err != nil {
		return built{}, err
	}
	return a.forecastOf(ctx, snap, now, eng)
}

func (a *Agent) snapshot(ctx context.Context) (forecast.Snapshot, error) {
	snap, err := a.deps.Snapshotter.Snapshot(ctx)
	if err != nil {
		a.met.ForecastFailed("snapshot")
		return snap, fmt.Errorf("snapshot of %s: %w", a.cfg.Site, err)
	}
	if snap.Site == "" {
		snap.Site = a.cfg.Site
	}
	return snap, nil
}

// runsParts: the agent runs grid jobs' parts (dispatch on), so the
// broker may plan parts here.
func (a *Agent) runsParts() bool { return a.deps.Executor != nil }

// forecastOf runs eng on snap, stamping the site and generation time.
func (a *Agent) forecastOf(ctx context.Context, snap forecast.Snapshot, now time.Time, eng Engine) (built, error) {
	var b built
	f, preds, err := eng.Forecast(ctx, snap, now)
	if err != nil {
		a.met.ForecastFailed("engine")
		return b, fmt.Errorf("forecast of %s: %w", a.cfg.Site, err)
	}
	f.Version = forecast.Version
	f.Site = a.cfg.Site
	f.Generated = now.Unix()
	runs := a.runsParts()
	f.RunsParts = &runs
	err = f.Validate()
	if err == nil {
		err = f.CheckCapacity()
	}
	if err != nil {
		a.met.ForecastFailed("slots")
		return b, fmt.Errorf("forecast of %s: engine produced %w", a.cfg.Site, err)
	}
	return built{snap: snap, forecast: f, predictions: preds}, nil
}

// Builds is how many forecasts the agent has built (tests count them).
func (a *Agent) Builds() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.builds
}

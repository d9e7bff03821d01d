package agent

import (
	"context"
	"fmt"
	"time"

	"lookahead/forecast"
)

// Predictor forecasts when and where every running and queued job of a
// snapshot runs; *maui.Simulator (Maui SIMULATION mode) implements it.
type Predictor interface {
	Forecast(ctx context.Context, snap forecast.Snapshot, now, horizon int64) ([]forecast.Prediction, error)
}

// MauiEngine forecasts by running the site's own scheduler in SIMULATION
// mode (through Predictor) and prices the predicted schedule with the
// owner's pricing, as the built-in engine does.
type MauiEngine struct {
	Sim     Predictor
	Horizon time.Duration
	Pricing forecast.Pricing
}

// Forecast runs the simulation from now to now+Horizon and builds slots.
func (e MauiEngine) Forecast(ctx context.Context, snap forecast.Snapshot, now time.Time) (forecast.Forecast, []forecast.Prediction, error) {
	t := now.Unix()
	h := t + int64(e.Horizon.Seconds())
	if !anyUsable(snap) {
		// Every node down or offline: no capacity, said with a forecast
		// (docs/formats.md, "An empty forecast means no capacity"), not
		// with silence that leaves the broker planning on the last one.
		return ForecastFromPredictions(snap, nil, t, h, e.Pricing), nil, nil
	}
	preds, err := e.Sim.Forecast(ctx, snap, t, h)
	if err != nil {
		return forecast.Forecast{}, nil, fmt.Errorf("maui simulation of %s: %w", snap.Site, err)
	}
	return ForecastFromPredictions(snap, preds, t, h, e.Pricing), preds, nil
}

// ForecastFromPredictions turns a predicted schedule into the v1 forecast
// (Seq 0): per usable node, [now, horizon) less advance reservations and
// the time running jobs are predicted to hold; time a queued job is
// predicted to hold is offered at pricing.Price(job) (or not at all), the
// rest at pricing.Base. Jobs bound to a reservation of the snapshot are
// inside it; predictions for jobs the snapshot does not know are held
// unpriced. Pure.
func ForecastFromPredictions(snap forecast.Snapshot, preds []forecast.Prediction, now, horizon int64, pricing forecast.Pricing) forecast.Forecast {
	var holds []forecast.Hold
	resv := map[string]bool{}
	for _, r := range snap.Reservations {
		resv[r.ID] = true
		for _, h := range r.Hosts {
			holds = append(holds, forecast.Hold{Node: h.Node, Procs: h.Procs, Start: r.Start, End: r.End})
		}
	}
	jobs := make(map[string]forecast.LocalJob, len(snap.Jobs))
	for _, j := range snap.Jobs {
		jobs[j.ID] = j
	}
	for _, p := range preds {
		j, known := jobs[p.Job]
		if known && j.Reservation != "" && resv[j.Reservation] {
			continue
		}
		price, priced := 0.0, false
		if known && j.Waiting() {
			price, priced = pricing.Price(j)
		}
		for _, h := range p.Hosts {
			holds = append(holds, forecast.Hold{Node: h.Node, Procs: h.Procs, Start: p.Start, End: p.End, Priced: priced, Price: price})
		}
	}
	return forecast.Forecast{Version: forecast.Version, Site: snap.Site, Generated: now, Horizon: horizon,
		Nodes: forecast.OfferedNodes(snap.Nodes), Slots: forecast.BuildSlots(snap.Nodes, holds, now, horizon, pricing.Base),
		FreePrice: pricing.Base}
}

var _ Engine = MauiEngine{}

func anyUsable(snap forecast.Snapshot) bool {
	for _, n := range snap.Nodes {
		if n.Usable() {
			return true
		}
	}
	return false
}

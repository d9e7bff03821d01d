package agent_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
)

// replayPredictor hands back a fixed schedule, as Maui would print it.
type replayPredictor []forecast.Prediction

func (r replayPredictor) Forecast(context.Context, forecast.Snapshot, int64, int64) ([]forecast.Prediction, error) {
	return r, nil
}

// Given the same schedule, the Maui engine prices it exactly as the
// built-in engine does: fed the built-in simulator's own predictions, it
// yields the built-in forecast, slot for slot.
func TestMauiEngineMatchesBuiltinOnTheSameSchedule(t *testing.T) {
	snap := bigSnapshot(50, 200, t0)
	snap.Nodes[3].State = []string{forecast.NodeDown}
	snap.Reservations = []forecast.Reservation{{ID: "la.g1.0", Job: "g1", Start: t0 + 3600, End: t0 + 7200,
		Hosts: []forecast.HostProcs{{Node: snap.Nodes[1].Name, Procs: 8}}}}
	for i := range snap.Jobs {
		if snap.Jobs[i].Waiting() && i%7 == 0 {
			snap.Jobs[i].Queue = "urgent"
		}
	}
	pricing := forecast.DefaultPricing()
	pricing.Rules = []forecast.PriceRule{{Queue: "urgent", Displace: forecast.Displace{Never: true}}}
	now := time.Unix(t0, 0)
	builtin := agent.BuiltinEngine{Horizon: 48 * time.Hour, Policy: sim.EASY, Pricing: pricing}
	want, preds, err := builtin.Forecast(context.Background(), snap, now)
	if err != nil {
		t.Fatal(err)
	}
	got, gotPreds, err := agent.MauiEngine{Sim: replayPredictor(preds), Horizon: 48 * time.Hour, Pricing: pricing}.Forecast(context.Background(), snap, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Slots) == 0 || !reflect.DeepEqual(got, want) || len(gotPreds) != len(preds) {
		t.Fatalf("maui engine forecast differs from the built-in one on the same schedule: %d vs %d slots", len(got.Slots), len(want.Slots))
	}
}

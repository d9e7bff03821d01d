package agent_test

import (
	"context"
	"os"
	"reflect"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/maui"
	"lookahead/torque"
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

// Two forecasts of an unchanged site by the real Maui engine, 10 s apart,
// are the same forecast (equal Fingerprint), although Torque's
// resources_used.walltime lags by a different amount in each snapshot:
// the running job ends at its start + walltime, not at now + limit − used.
// Needs LOOKAHEAD_MAUI_BIN (the Maui clients; the server in ../sbin or
// beside them).
func TestRealMauiEngineForecastRepeats(t *testing.T) {
	bin := os.Getenv("LOOKAHEAD_MAUI_BIN")
	if bin == "" {
		t.Skip("LOOKAHEAD_MAUI_BIN not set")
	}
	eng := agent.MauiEngine{Sim: maui.NewSimulator(maui.SimulatorConfig{BinDir: bin, WorkDir: t.TempDir()}),
		Horizon: 2 * time.Hour, Pricing: forecast.DefaultPricing()}
	snap := func(now, used int64) forecast.Snapshot {
		return forecast.Snapshot{Site: "vm", Taken: now, Nodes: []forecast.SnapshotNode{{Name: "vm", Procs: 8, State: []string{"free"}, Speed: 1}},
			Jobs: []forecast.LocalJob{
				{ID: "1.vm", User: "alice", State: "R", Procs: 4, Walltime: 600, Started: t0 - 100, Used: used, Hosts: []forecast.HostProcs{{Node: "vm", Procs: 4}}},
				{ID: "2.vm", User: "bob", State: "Q", Procs: 6, Walltime: 600, Submitted: t0 - 50}}}
	}
	var prints [][32]byte
	for _, s := range []struct{ now, used int64 }{{t0, 89}, {t0 + 10, 89}, {t0 + 20, 117}} {
		f, _, err := eng.Forecast(context.Background(), snap(s.now, s.used), time.Unix(s.now, 0))
		if err != nil {
			t.Fatal(err)
		}
		f.Generated = s.now
		prints = append(prints, agent.Fingerprint(&f))
	}
	if prints[0] != prints[1] || prints[1] != prints[2] {
		t.Fatal("forecasts of an unchanged site differ: they would be republished instead of a heartbeat")
	}
}

// Issue 22.9, captured live (testdata/torque-6.1.3-live-down: pbsnodes -x
// after `pbsnodes -o vm`): with no usable node the Maui engine publishes a
// forecast with no capacity (docs/formats.md, "An empty forecast means no
// capacity") instead of failing "no usable node", which left the broker
// planning on the last forecast. The predictor here does what the real
// Simulator does first: it builds Maui's traces, which fail for such a
// snapshot.
func TestMauiEngineNoUsableNodeIsAnEmptyForecast(t *testing.T) {
	f, err := os.Open("testdata/torque-6.1.3-live-down/pbsnodes_x_offline.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nodes, err := torque.ParsePbsnodesXML(f)
	if err != nil {
		t.Fatal(err)
	}
	snap := forecast.Snapshot{Site: "vm", Nodes: nodes}
	now := time.Unix(t0, 0)
	eng := agent.MauiEngine{Sim: tracePredictor{}, Horizon: 24 * time.Hour, Pricing: forecast.DefaultPricing()}
	got, _, err := eng.Forecast(context.Background(), snap, now)
	if err != nil {
		t.Fatalf("forecast of a site with node vm offline: %v", err)
	}
	got.Version, got.Site, got.Generated = forecast.Version, "vm", t0
	if err := got.Validate(); err != nil || len(got.Slots) != 0 || got.Horizon != t0+24*3600 {
		t.Fatalf("forecast %+v (%v), want a valid one with no slots up to the horizon", got, err)
	}
}

// tracePredictor builds Maui's workload traces of the snapshot, as the
// real Simulator does before it runs Maui, and predicts nothing.
type tracePredictor struct{}

func (tracePredictor) Forecast(_ context.Context, snap forecast.Snapshot, now, _ int64) ([]forecast.Prediction, error) {
	_, err := maui.BuildTraces(snap, maui.TraceOptions{Now: now})
	return nil, err
}

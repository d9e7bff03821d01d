package agent

import (
	"context"
	"fmt"
	"time"

	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/torque"
)

// BuiltinEngine forecasts with the built-in simulator (forecast/sim):
// the embedded default where Maui is not installed.
type BuiltinEngine struct {
	Horizon time.Duration
	Policy  sim.Policy
	Pricing forecast.Pricing
}

// Forecast runs sim.Build from now to now+Horizon.
func (e BuiltinEngine) Forecast(_ context.Context, snap forecast.Snapshot, now time.Time) (forecast.Forecast, []forecast.Prediction, error) {
	t := now.Unix()
	return sim.Build(snap, t, t+int64(e.Horizon.Seconds()), e.Policy, e.Pricing)
}

// TorqueSnapshotter reads snapshots through the Torque adapter (qstat -f
// -x, pbsnodes -x).
type TorqueSnapshotter struct {
	Client *torque.Client
}

// Snapshot reads the cluster from Torque.
func (t TorqueSnapshotter) Snapshot(ctx context.Context) (forecast.Snapshot, error) {
	s, err := t.Client.Snapshot(ctx)
	if err != nil {
		return forecast.Snapshot{}, err
	}
	if s == nil {
		return forecast.Snapshot{}, fmt.Errorf("torque snapshot: empty")
	}
	return *s, nil
}

var (
	_ Engine      = BuiltinEngine{}
	_ Snapshotter = TorqueSnapshotter{}
)

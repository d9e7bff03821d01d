package agent

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/torque"
)

// BuiltinEngine forecasts with the built-in simulator (forecast/sim):
// the embedded default where Maui is not installed. Policy is the site's
// (SitePolicy); Unmodelled, what of it the simulator cannot follow, goes
// into every forecast.
type BuiltinEngine struct {
	Horizon    time.Duration
	Policy     sim.Policy
	Unmodelled []string
	Pricing    forecast.Pricing
}

// Forecast runs sim.Build from now to now+Horizon.
func (e BuiltinEngine) Forecast(_ context.Context, snap forecast.Snapshot, now time.Time) (forecast.Forecast, []forecast.Prediction, error) {
	t := now.Unix()
	f, preds, err := sim.Build(snap, t, t+int64(e.Horizon.Seconds()), e.Policy, e.Pricing)
	f.Unmodelled = e.Unmodelled
	return f, preds, err
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

// TorqueHandler turns the Torque adapter's events (log tailers,
// scheduler-port listener) into the agent's hints: every event triggers a
// debounced forecast, and a job start is scored against its forecast start.
// It never fails, so a tailer commits each line once it is handed on.
func (a *Agent) TorqueHandler() torque.Handler {
	return func(_ context.Context, ev torque.Event) error {
		source := eventSource(ev.Source)
		if ev.Kind == torque.JobStarted && ev.Job != "" {
			at := ev.Time
			if s, err := strconv.ParseInt(ev.Fields["start"], 10, 64); err == nil && s > 0 {
				at = time.Unix(s, 0)
			}
			a.JobStarted(source, ev.Job, at)
			return nil
		}
		a.Notify(source)
		return nil
	}
}

// Event sources as the agent's metrics label them.
const (
	SourceServerLog     = "server_log"
	SourceAccounting    = "accounting"
	SourceSchedulerPort = "scheduler_port"
	SourceRefresh       = "refresh"
	SourceReservation   = "reservation"
)

// eventSource maps the Torque adapter's source names to metric labels.
func eventSource(s string) string {
	switch s {
	case torque.SourceServerLog:
		return SourceServerLog
	case torque.SourceAccounting:
		return SourceAccounting
	case torque.SourceSchedPort:
		return SourceSchedulerPort
	}
	return s
}

// AddSources adds event sources that Run will run (and stop with it).
// Call it before Run, e.g. with tailers built on TorqueHandler.
func (a *Agent) AddSources(s ...Source) {
	a.deps.Sources = append(a.deps.Sources, s...)
}

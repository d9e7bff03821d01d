package agent

import (
	"context"
	"fmt"
	"slices"
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
	// Fairshare, when the policy has fairshare, reads the site's usage
	// at every forecast (withFairshare); nil starts from zero usage.
	Fairshare FairshareSource
}

// Forecast runs sim.Build from now to now+Horizon.
func (e BuiltinEngine) Forecast(ctx context.Context, snap forecast.Snapshot, now time.Time) (forecast.Forecast, []forecast.Prediction, error) {
	t := now.Unix()
	pol, note := e.withFairshare(ctx, t)
	f, preds, err := sim.Build(snap, t, t+int64(e.Horizon.Seconds()), pol, e.Pricing)
	f.Unmodelled = append(slices.Clip(e.Unmodelled), f.Unmodelled...) // the policy's, then the snapshot's (sim.Build)
	if note != "" {
		f.Unmodelled = append(f.Unmodelled, note)
	}
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

// HoldingSnapshotter adds the site's reservations in force to a
// snapshot: without them a forecast offers reserved processors again and
// the reserve path's re-check is blind to them (double booking). A
// snapshot without its holds is wrong, so failing to list them fails the
// snapshot. Holds on nodes the snapshot does not know are dropped (Torque
// and Maui name nodes alike in PBS mode), processors are capped at the
// node's, and a local job charged to a hold's binding account (as its
// user) is bound to that hold as if it named it with ADVRES.
type HoldingSnapshotter struct {
	Snapshotter Snapshotter
	Holds       HoldLister
}

// Snapshot reads the base snapshot, then the holds.
func (h HoldingSnapshotter) Snapshot(ctx context.Context) (forecast.Snapshot, error) {
	snap, err := h.Snapshotter.Snapshot(ctx)
	if err != nil {
		return snap, err
	}
	holds, err := h.Holds.Holds(ctx)
	if err != nil {
		return forecast.Snapshot{}, fmt.Errorf("reservations in force: %w", err)
	}
	return WithHolds(snap, holds), nil
}

// WithHolds returns snap with holds as its reservations (see
// HoldingSnapshotter). Pure.
func WithHolds(snap forecast.Snapshot, holds []Hold) forecast.Snapshot {
	procs := map[string]int{}
	for _, n := range snap.Nodes {
		procs[n.Name] = n.Procs
	}
	snap.Reservations = slices.Clone(snap.Reservations)
	for _, h := range holds {
		r := h.Reservation
		r.Hosts = nil
		for _, hp := range h.Reservation.Hosts {
			if p, ok := procs[hp.Node]; ok && p > 0 && hp.Procs > 0 {
				r.Hosts = append(r.Hosts, forecast.HostProcs{Node: hp.Node, Procs: min(hp.Procs, p)})
			}
		}
		if len(r.Hosts) > 0 && r.End > r.Start {
			snap.Reservations = append(snap.Reservations, r)
		}
	}
	snap.Jobs = slices.Clone(snap.Jobs)
	for i, j := range snap.Jobs {
		if j.Reservation != "" || j.Account == "" {
			continue
		}
		for _, h := range holds {
			if h.Account == j.Account && (h.User == "" || h.User == j.User) {
				snap.Jobs[i].Reservation = h.Reservation.ID
				break
			}
		}
	}
	return snap
}

var (
	_ Engine      = BuiltinEngine{}
	_ Snapshotter = TorqueSnapshotter{}
	_ Snapshotter = HoldingSnapshotter{}
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

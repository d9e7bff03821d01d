package agent

import (
	"context"
	"time"

	"lookahead/forecast"
	"lookahead/wire"
)

// Snapshotter reads the cluster's state now (qstat/pbsnodes through the
// Torque adapter, or a simulated site).
type Snapshotter interface {
	Snapshot(ctx context.Context) (forecast.Snapshot, error)
}

// Engine forecasts a snapshot forward from now: the priced v1 forecast
// (Seq and Generated are set by the agent) and every local job's predicted
// start and end.
type Engine interface {
	Forecast(ctx context.Context, snap forecast.Snapshot, now time.Time) (forecast.Forecast, []forecast.Prediction, error)
}

// EngineFunc adapts a function to Engine.
type EngineFunc func(ctx context.Context, snap forecast.Snapshot, now time.Time) (forecast.Forecast, []forecast.Prediction, error)

// Forecast calls fn.
func (fn EngineFunc) Forecast(ctx context.Context, snap forecast.Snapshot, now time.Time) (forecast.Forecast, []forecast.Prediction, error) {
	return fn(ctx, snap, now)
}

// ReserveSpec is a checked reservation request: processors on named nodes
// over [Start, End) for grid job Job, usable only by the job's parts under
// Identity. The agent fills Capacity (processors of each usable node) and
// InUse (accounts the site's local jobs are charged to) from the snapshot
// it checked the request on: a Reserver refuses overlaps with them and
// never binds a reservation to an account a local job already uses.
type ReserveSpec struct {
	Job      string
	Start    int64
	End      int64
	Nodes    []wire.NodeProcs
	Identity wire.Identity
	Capacity map[string]int
	InUse    []string
	// Bind, when set, is the binding account to keep: a repair re-creates
	// a reservation with the account its parts were told.
	Bind string `json:",omitempty"`
}

// Reserved is what a Reserver made: the reservations (verified where the
// scheduler allows) and the exact argument vectors it ran, for the audit.
type Reserved struct {
	Reservations []wire.Reservation
	Commands     [][]string
}

// Released is what a Reserver released, with the commands it ran.
type Released struct {
	IDs      []string
	Commands [][]string
}

// Reserver holds advance reservations where the resource lives (Maui
// setres/showres/releaseres, or a simulated site's engine).
//
// Reserve creates every reservation of one grid job or none (it rolls
// back on a partial failure). Release removes every reservation of job and
// is idempotent: nothing to release is an empty Released, not an error.
// List reports the site's lookahead reservations as the scheduler sees
// them (not from memory), with Job set. Errors mean the machinery failed;
// a scheduler refusal should be an error wrapping ErrScheduler.
type Reserver interface {
	Reserve(ctx context.Context, spec ReserveSpec) (Reserved, error)
	Release(ctx context.Context, job string) (Released, error)
	List(ctx context.Context) ([]wire.Reservation, error)
}

// ACLRestorer is a Reserver that can set a grid reservation's ACL back to
// what it made in place, its nodes, times and the parts queued in it kept
// (SlurmSite: a Slurm reservation with jobs queued in it cannot be
// deleted without cancelling them). The agent's repair of a reservation
// whose ACL alone was altered tries it before re-creating it.
type ACLRestorer interface {
	RestoreACL(ctx context.Context, spec ReserveSpec) (Reserved, error)
}

// Hold is one reservation of the site that a forecast must leave alone:
// its processors are not offered and local jobs run around it. Account
// and User, when set, are what a job is charged to and runs as to run
// inside it (a grid job's part): such jobs are bound to it.
type Hold struct {
	Reservation forecast.Reservation
	Account     string
	User        string
}

// HoldLister lists the site's reservations in force (lookahead's own and
// foreign ones: admins', standing); MauiReserver reads them from Maui.
type HoldLister interface {
	Holds(ctx context.Context) ([]Hold, error)
}

// Source is an event source (log tailer, scheduler-port listener) owned
// by the agent's Run: it reports changes by calling the agent's Notify or
// JobStarted (wired when the source is built) and returns when ctx ends.
type Source interface {
	Run(ctx context.Context) error
}

// Metrics is what the agent records; *metrics.Agent (internal/metrics)
// implements it. A nil Metrics in Deps records nothing.
type Metrics interface {
	Event(source string)
	ForecastBuilt(d time.Duration)
	ForecastFailed(stage string)
	ForecastPublished(revision uint64, slots, bytes int, at time.Time)
	HeartbeatPublished(at time.Time)
	PublishFailed()
	ReservationRequest(verb, code string)
	StartError(predicted, actual time.Time)
	// ForeignJob counts a local job found running in a grid reservation
	// that is not the grid job's part.
	ForeignJob()
	// SchedulerRestart counts a scheduler restart seen (it answered again
	// after failing, or restored reservations with altered ACLs).
	SchedulerRestart()
	// RepairFailed counts a held reservation the agent could not
	// re-create.
	RepairFailed()
	// EpochRefused counts a request refused for its broker epoch, by
	// reason: fenced (older than the highest seen), unverified (no broker
	// began that term), error (the epoch could not be read, kept or
	// verified).
	EpochRefused(reason string)
}

type nopMetrics struct{}

func (nopMetrics) Event(string)                                  {}
func (nopMetrics) ForecastBuilt(time.Duration)                   {}
func (nopMetrics) ForecastFailed(string)                         {}
func (nopMetrics) ForecastPublished(uint64, int, int, time.Time) {}
func (nopMetrics) HeartbeatPublished(time.Time)                  {}
func (nopMetrics) PublishFailed()                                {}
func (nopMetrics) ReservationRequest(string, string)             {}
func (nopMetrics) StartError(time.Time, time.Time)               {}
func (nopMetrics) ForeignJob()                                   {}
func (nopMetrics) SchedulerRestart()                             {}
func (nopMetrics) RepairFailed()                                 {}
func (nopMetrics) EpochRefused(string)                           {}

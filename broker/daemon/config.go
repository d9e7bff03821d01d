package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"lookahead/broker"
	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/wire"
)

// Metrics is what the broker reports to Prometheus; *metrics.Broker of
// internal/metrics implements it. Nil reports nothing.
type Metrics interface {
	CycleDone(d time.Duration, end time.Time, planned, unplaced int)
	SetJobs(byState map[string]int)
	SetSites(fresh, stale int)
	Submission(code string)
	Committed()
	RolledBack(reason string)
	NoShowReleased()
	AuditDone(found map[string]int)
	SetUnanswered(n int)
	JobEventIgnored(reason string)
	Replanned(reused int, byReason map[string]int)
	SlotsOutsideWindow(clipped, dropped int)
}

type noMetrics struct{}

func (noMetrics) CycleDone(time.Duration, time.Time, int, int) {}
func (noMetrics) SetJobs(map[string]int)                       {}
func (noMetrics) SetSites(int, int)                            {}
func (noMetrics) Submission(string)                            {}
func (noMetrics) Committed()                                   {}
func (noMetrics) RolledBack(string)                            {}
func (noMetrics) NoShowReleased()                              {}
func (noMetrics) AuditDone(map[string]int)                     {}
func (noMetrics) SetUnanswered(int)                            {}
func (noMetrics) JobEventIgnored(string)                       {}
func (noMetrics) Replanned(int, map[string]int)                {}
func (noMetrics) SlotsOutsideWindow(int, int)                  {}

// Clock gives the broker its notion of now. The daemon uses the wall clock;
// the demo an accelerated one; tests a settable one.
type Clock interface{ Now() time.Time }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// WallClock is the real clock.
var WallClock Clock = wallClock{}

// Config is everything the broker needs besides a NATS connection. Zero
// durations take the defaults below.
type Config struct {
	// Name is the broker's actor name in reserve requests and audit records.
	Name string
	// CycleInterval is the time between planning cycles (default 30 s).
	CycleInterval time.Duration
	// Debounce delays a cycle triggered by a submission or a forecast change
	// so a burst costs one cycle (default 1 s).
	Debounce time.Duration
	// CommitLead: jobs planned to start within it are reserved (default
	// 10 min); a waiting job's why says when that is (reservedWhen).
	CommitLead time.Duration
	// ReserveTimeout bounds a commit's parallel reserve requests and each
	// release (default 10 s).
	ReserveTimeout time.Duration
	// ForecastTTL: a site silent longer than this is stale (default 5 min).
	ForecastTTL time.Duration
	// MaxClockSkew is how far ahead of the broker's clock a site's may
	// be: a forecast or heartbeat generated further ahead is refused
	// (default 1 min). Freshness is judged by the broker's receive time.
	MaxClockSkew time.Duration
	// StartGrace is how long after its reservation's start every part of
	// a dispatched job must have started, and after its end every part
	// must have ended; otherwise the job fails and is cleaned up
	// (default 2 min).
	StartGrace time.Duration
	// StartMargin keeps planned starts this far after now, so a reservation
	// is not in the past by the time it reaches the site (default 30 s).
	StartMargin time.Duration
	// Retain is how long ended jobs (finished, failed, cancelled,
	// expired) stay in the queue and in status --all (default 7 days).
	Retain time.Duration
	// SnapshotInterval is how often the queue is snapshotted and the
	// events before the snapshot purged (default 1 h).
	SnapshotInterval time.Duration
	// Replicas of the streams and buckets the broker creates (default 1).
	Replicas int
	// JSDomain is the grid's JetStream domain (nats.js_domain): empty is
	// the JetStream of the server the broker is connected to.
	JSDomain string
	// LeaseTTL is the leadership lease's time to live when the broker
	// creates the lease bucket (default 10 s); an existing bucket's TTL
	// wins. It must sit well above the cluster's leader re-election time.
	LeaseTTL time.Duration
	Policy   broker.Policy
	// Planner places jobs; required (the co-allocation core in production).
	Planner broker.Planner
	// Queue is the queue order Planner plans in; required with Planner:
	// the *Planner itself (UsePlanner sets both; PlannerOptions.Order and
	// Aging are the one setting), or FCFS for a Planner that plans the
	// jobs in the order it is given. A cycle sorts its jobs in it before
	// planning and commits its allocations in it, so a job planned first
	// is also reserved first (it wins a budget both cannot fit in), and
	// status, the plan and the web view name it.
	Queue Queue
	// Explain, when set, says why a job gets no allocation on forecasts
	// planned from notBefore and what would help (Planner.Explain):
	// status of one waiting job that did not fit shows it as the plan's why.
	Explain func(fcs []forecast.Forecast, job forecast.JobRequest, notBefore int64) string
	// ExplainLater, when set, says why a job planned at a.Start, later
	// than notBefore, cannot start at notBefore (Planner.ExplainLater):
	// status of one waiting job planned later shows it, then when it is
	// reserved (CommitLead), before the plan's why.
	ExplainLater func(fcs []forecast.Forecast, job forecast.JobRequest, a forecast.Allocation, notBefore int64) string
	// PlanStats, when set, says what the planner re-planned in the cycle
	// just run and why (Planner.TakeStats): logged and counted per cycle.
	PlanStats func() coalloc.Stats
	Clock     Clock
	Log       zerolog.Logger
	Metrics   Metrics
	// appendHook, when set, sees every append with its context first
	// (tests of what handlers hold while they append).
	appendHook func(context.Context, broker.Event)
	// auditHook, when set, sees every audit record before it is published.
	auditHook func(wire.AuditRecord)
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.CycleInterval, 30*time.Second)
	def(&c.Debounce, time.Second)
	def(&c.CommitLead, 10*time.Minute)
	def(&c.ReserveTimeout, 10*time.Second)
	def(&c.ForecastTTL, 5*time.Minute)
	def(&c.StartMargin, 30*time.Second)
	def(&c.StartGrace, 2*time.Minute)
	def(&c.MaxClockSkew, time.Minute)
	def(&c.Retain, 7*24*time.Hour)
	def(&c.SnapshotInterval, time.Hour)
	def(&c.LeaseTTL, 10*time.Second)
	if c.Name == "" {
		c.Name = "broker"
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Metrics == nil {
		c.Metrics = noMetrics{}
	}
	if c.Clock == nil {
		c.Clock = WallClock
	}
}

// Queue is a queue order: its name (coalloc's Order* constants) and the
// sort that puts jobs in it. *Planner is one.
type Queue interface {
	Order() string
	SortQueue(jobs []forecast.JobRequest)
}

// FCFS is the fcfs queue order, the Queue of a Planner that plans the
// jobs in the order it is given (a test's reference planner); a
// *Planner is bound with UsePlanner instead.
var FCFS Queue = optionsQueue{coalloc.Options{Order: coalloc.OrderFCFS}}

// optionsQueue is the queue order of coalloc options.
type optionsQueue struct{ o coalloc.Options }

func (q optionsQueue) Order() string                        { return q.o.QueueOrder() }
func (q optionsQueue) SortQueue(jobs []forecast.JobRequest) { q.o.SortQueue(jobs) }

// Validate reports settings that cannot work.
func (c *Config) Validate() error {
	for name, d := range map[string]time.Duration{"cycle_interval": c.CycleInterval, "debounce": c.Debounce,
		"commit_lead": c.CommitLead, "reserve_timeout": c.ReserveTimeout, "forecast_ttl": c.ForecastTTL, "start_margin": c.StartMargin,
		"start_grace": c.StartGrace, "max_clock_skew": c.MaxClockSkew, "retain": c.Retain, "snapshot_interval": c.SnapshotInterval, "lease_ttl": c.LeaseTTL} {
		if d < 0 {
			return fmt.Errorf("%s: %v, must not be negative", name, d)
		}
	}
	if c.Planner == nil {
		return fmt.Errorf("no planner configured")
	}
	if c.Queue == nil {
		return errors.New("planner without a queue order: bind a *Planner with Config.UsePlanner " +
			"(it sets Planner, Queue and the why-texts together), or set Queue to the order the planner plans in (FCFS)")
	}
	if c.Policy.MaxWalltime < 0 {
		return fmt.Errorf("max_walltime: %d, must not be negative", c.Policy.MaxWalltime)
	}
	return c.Policy.Budgets.Validate()
}

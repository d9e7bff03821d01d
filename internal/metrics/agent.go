package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Event sources the agent counts (label "source" of events and rejected
// lines). Other values are accepted; keep them few and fixed.
const (
	SourceServerLog     = "server_log"     // pbs_server server_logs/ tailer
	SourceAccounting    = "accounting"     // server_priv/accounting/ tailer
	SourceSchedulerPort = "scheduler_port" // pbs_server → scheduler notifications
	SourceRefresh       = "refresh"        // the periodic full refresh
)

// Agent is the metric set of one site agent. Methods are safe for
// concurrent use; every method of a nil *Agent does nothing.
type Agent struct {
	info              *prometheus.GaugeVec
	built             prometheus.Counter
	buildSeconds      prometheus.Histogram
	buildFailures     *prometheus.CounterVec
	events            *prometheus.CounterVec
	rejected          *prometheus.CounterVec
	published         *prometheus.CounterVec
	publishFailures   prometheus.Counter
	slots             prometheus.Gauge
	slotsTotal        prometheus.Counter
	encodedBytes      prometheus.Gauge
	revision          prometheus.Gauge
	lastPublish       prometheus.Gauge
	reservations      *prometheus.CounterVec
	startError        prometheus.Histogram
	startErrorOutcome *prometheus.CounterVec
	foreignJobs       prometheus.Counter
	schedRestarts     prometheus.Counter
	repairFailures    prometheus.Counter
	epochRefusals     *prometheus.CounterVec
}

// NewAgent creates the agent metrics and registers them on reg (a private
// registry when reg is nil). It panics if they are already registered on
// reg: wrap reg with a "site" label to run several agents in one process.
func NewAgent(reg prometheus.Registerer) *Agent {
	a := &Agent{
		info: prometheus.NewGaugeVec(agentOpts("info",
			"Always 1; labels carry the agent's version."), []string{"version"}),
		built: prometheus.NewCounter(counterOpts("agent", "forecasts_built_total",
			"Forecasts built successfully (snapshot, engine, slots).")),
		buildSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "agent", Name: "forecast_build_seconds",
			Help:    "Time to build one forecast: snapshot, engine run and slot building.",
			Buckets: buildBuckets,
		}),
		buildFailures: prometheus.NewCounterVec(counterOpts("agent", "forecast_failures_total",
			"Forecasts that failed, by stage (snapshot, engine, slots, encode)."), []string{"stage"}),
		events: prometheus.NewCounterVec(counterOpts("agent", "events_total",
			"Change events seen, by source; events are hints that trigger a debounced forecast."), []string{"source"}),
		rejected: prometheus.NewCounterVec(counterOpts("agent", "log_lines_rejected_total",
			"Torque log or accounting lines that could not be parsed and were skipped, by source."), []string{"source"}),
		published: prometheus.NewCounterVec(counterOpts("agent", "forecasts_published_total",
			"Messages published on the site's forecast subject, by kind (forecast, heartbeat)."), []string{"kind"}),
		publishFailures: prometheus.NewCounter(counterOpts("agent", "publish_failures_total",
			"Forecast or heartbeat publications that failed (NATS or KV).")),
		slots: prometheus.NewGauge(gaugeOpts("agent", "published_slots",
			"Slots in the last published forecast.")),
		slotsTotal: prometheus.NewCounter(counterOpts("agent", "slots_published_total",
			"Slots published, summed over every published forecast.")),
		encodedBytes: prometheus.NewGauge(gaugeOpts("agent", "forecast_encoded_bytes",
			"Size on the wire of the last published forecast, in bytes.")),
		revision: prometheus.NewGauge(gaugeOpts("agent", "forecast_revision",
			"Sequence number (revision) of the last published forecast.")),
		lastPublish: prometheus.NewGauge(gaugeOpts("agent", "last_publish_timestamp_seconds",
			"Unix time of the last successful forecast or heartbeat publication.")),
		reservations: prometheus.NewCounterVec(counterOpts("agent", "reservation_requests_total",
			"Reservation service requests, by verb (reserve, release, list) and result code."), []string{"verb", "code"}),
		startError: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "agent", Name: "start_forecast_error_seconds",
			Help:    "Absolute error of forecast start times of local jobs, measured when Torque reports the real start.",
			Buckets: startErrorBuckets,
		}),
		startErrorOutcome: prometheus.NewCounterVec(counterOpts("agent", "start_forecasts_checked_total",
			"Forecast start times checked against real starts, by outcome (early: started before the forecast, late, exact)."), []string{"outcome"}),
		foreignJobs: prometheus.NewCounter(counterOpts("agent", "foreign_jobs_total",
			"Local jobs seen running in a grid reservation that are not the grid job's part (counted once per job).")),
		schedRestarts: prometheus.NewCounter(counterOpts("agent", "scheduler_restarts_seen_total",
			"Scheduler (Maui) restarts seen: it answered again after failing, or restored grid reservations with altered ACLs.")),
		repairFailures: prometheus.NewCounter(counterOpts("agent", "reservation_repairs_failed_total",
			"Grid reservations lost or altered by the scheduler that the agent could not re-create.")),
		epochRefusals: prometheus.NewCounterVec(counterOpts("agent", "epoch_refusals_total",
			"Requests refused for their broker epoch, by reason: fenced (older than the highest seen), unverified (above the job stream's last term record), error (not read, kept or verified)."), []string{"reason"}),
	}
	registerer(reg).MustRegister(a.epochRefusals, a.foreignJobs, a.schedRestarts, a.repairFailures, a.info, a.built, a.buildSeconds, a.buildFailures, a.events,
		a.rejected, a.published, a.publishFailures, a.slots, a.slotsTotal, a.encodedBytes,
		a.revision, a.lastPublish, a.reservations, a.startError, a.startErrorOutcome)
	return a
}

// SetVersion sets lookahead_agent_info{version} to 1.
func (a *Agent) SetVersion(version string) {
	if a != nil {
		a.info.Reset()
		a.info.WithLabelValues(version).Set(1)
	}
}

// ForecastBuilt records one forecast built in d.
func (a *Agent) ForecastBuilt(d time.Duration) {
	if a != nil {
		a.built.Inc()
		a.buildSeconds.Observe(d.Seconds())
	}
}

// ForecastFailed records a forecast that failed at stage (snapshot,
// engine, slots, encode).
func (a *Agent) ForecastFailed(stage string) {
	if a != nil {
		a.buildFailures.WithLabelValues(stage).Inc()
	}
}

// Event records one change event from source (Source* constants).
func (a *Agent) Event(source string) {
	if a != nil {
		a.events.WithLabelValues(source).Inc()
	}
}

// LineRejected records one unparsable log line from source.
func (a *Agent) LineRejected(source string) {
	if a != nil {
		a.rejected.WithLabelValues(source).Inc()
	}
}

// ForecastPublished records a published forecast: its revision, number of
// slots, encoded size in bytes, and when it was published.
func (a *Agent) ForecastPublished(revision uint64, slots, bytes int, at time.Time) {
	if a == nil {
		return
	}
	a.published.WithLabelValues("forecast").Inc()
	a.slots.Set(float64(slots))
	a.slotsTotal.Add(float64(slots))
	a.encodedBytes.Set(float64(bytes))
	a.revision.Set(float64(revision))
	a.lastPublish.Set(float64(at.Unix()))
}

// HeartbeatPublished records a heartbeat sent instead of an unchanged
// forecast.
func (a *Agent) HeartbeatPublished(at time.Time) {
	if a != nil {
		a.published.WithLabelValues("heartbeat").Inc()
		a.lastPublish.Set(float64(at.Unix()))
	}
}

// PublishFailed records a failed forecast or heartbeat publication.
func (a *Agent) PublishFailed() {
	if a != nil {
		a.publishFailures.Inc()
	}
}

// ReservationRequest records one reservation service request by verb
// (wire.VerbReserve, ...) and result code (wire.CodeOK, wire.CodeStale, ...).
func (a *Agent) ReservationRequest(verb, code string) {
	if a != nil {
		a.reservations.WithLabelValues(verb, code).Inc()
	}
}

// StartError records how far a local job's real start was from its
// forecast start.
func (a *Agent) StartError(predicted, actual time.Time) {
	if a == nil {
		return
	}
	d := actual.Sub(predicted)
	outcome := "exact"
	switch {
	case d < 0:
		outcome, d = "early", -d
	case d > 0:
		outcome = "late"
	}
	a.startError.Observe(d.Seconds())
	a.startErrorOutcome.WithLabelValues(outcome).Inc()
}

func agentOpts(name, help string) prometheus.GaugeOpts {
	return gaugeOpts("agent", name, help)
}

func counterOpts(subsystem, name, help string) prometheus.CounterOpts {
	return prometheus.CounterOpts{Namespace: Namespace, Subsystem: subsystem, Name: name, Help: help}
}

func gaugeOpts(subsystem, name, help string) prometheus.GaugeOpts {
	return prometheus.GaugeOpts{Namespace: Namespace, Subsystem: subsystem, Name: name, Help: help}
}

// ForeignJob records a local job found running in a grid reservation
// that is not the grid job's part.
func (a *Agent) ForeignJob() {
	if a != nil {
		a.foreignJobs.Inc()
	}
}

// SchedulerRestart records a scheduler restart seen.
func (a *Agent) SchedulerRestart() {
	if a != nil {
		a.schedRestarts.Inc()
	}
}

// RepairFailed records a grid reservation the agent could not re-create.
func (a *Agent) RepairFailed() {
	if a != nil {
		a.repairFailures.Inc()
	}
}

// EpochRefused records a request refused for its broker epoch.
func (a *Agent) EpochRefused(reason string) {
	if a != nil {
		a.epochRefusals.WithLabelValues(reason).Inc()
	}
}

package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Audit drift kinds (label "kind" of lookahead_broker_audit_drift_found_total).
const (
	DriftMissing  = "missing"  // the broker believes in a reservation Maui does not have
	DriftOrphaned = "orphaned" // Maui has a lookahead reservation the broker does not know
	DriftDrifted  = "drifted"  // both know it but times, nodes or ACL differ
)

// Broker is the metric set of the broker. Methods are safe for concurrent
// use; every method of a nil *Broker does nothing.
type Broker struct {
	info          *prometheus.GaugeVec
	cycleSeconds  prometheus.Histogram
	cycles        prometheus.Counter
	lastCycle     prometheus.Gauge
	planned       prometheus.Gauge
	unplaced      prometheus.Gauge
	jobs          *prometheus.GaugeVec
	sites         *prometheus.GaugeVec
	submissions   *prometheus.CounterVec
	commits       prometheus.Counter
	rollbacks     *prometheus.CounterVec
	noShows       prometheus.Counter
	audits        prometheus.Counter
	repairsFailed prometheus.Counter
	drift         *prometheus.CounterVec
	unanswered    prometheus.Gauge
	ignoredEvents *prometheus.CounterVec
	outsideWindow *prometheus.CounterVec
	replanned     *prometheus.CounterVec
	reused        prometheus.Counter
	mu            sync.Mutex
	jobStatesSeen map[string]bool
	leaderMetrics
}

// NewBroker creates the broker metrics and registers them on reg (a
// private registry when reg is nil). It panics if they are already
// registered on reg.
func NewBroker(reg prometheus.Registerer) *Broker {
	b := &Broker{
		info: prometheus.NewGaugeVec(gaugeOpts("broker", "info",
			"Always 1; labels carry the broker's version."), []string{"version"}),
		cycleSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "broker", Name: "cycle_seconds",
			Help:    "Time of one planning cycle: snapshot of forecasts and queue, planning, publishing the plan.",
			Buckets: cycleBuckets,
		}),
		cycles: prometheus.NewCounter(counterOpts("broker", "cycles_total",
			"Planning cycles run.")),
		lastCycle: prometheus.NewGauge(gaugeOpts("broker", "last_cycle_timestamp_seconds",
			"Unix time the last planning cycle finished.")),
		planned: prometheus.NewGauge(gaugeOpts("broker", "planned_jobs",
			"Jobs the last cycle found an allocation for.")),
		unplaced: prometheus.NewGauge(gaugeOpts("broker", "unplaced_jobs",
			"Jobs the last cycle could not place within the horizon.")),
		jobs: prometheus.NewGaugeVec(gaugeOpts("broker", "jobs",
			"Grid jobs known to the broker, by state."), []string{"state"}),
		sites: prometheus.NewGaugeVec(gaugeOpts("broker", "sites",
			"Sites with a forecast, by freshness (fresh: in planning; stale: older than its TTL)."), []string{"state"}),
		submissions: prometheus.NewCounterVec(counterOpts("broker", "submissions_total",
			"Job submissions received, by result code."), []string{"code"}),
		commits: prometheus.NewCounter(counterOpts("broker", "commits_total",
			"Jobs reserved on every involved site (all-or-nothing commit succeeded).")),
		rollbacks: prometheus.NewCounterVec(counterOpts("broker", "rollbacks_total",
			"Commits rolled back (reservations released), by reason code."), []string{"reason"}),
		noShows: prometheus.NewCounter(counterOpts("broker", "no_show_releases_total",
			"Reservations released at their end because the grid job never showed up.")),
		repairsFailed: prometheus.NewCounter(counterOpts("broker", "audit_repairs_failed_total",
			"Audit repairs that could not be done: refused by the site, failed, or a site that did not answer an audit with repair.")),
		audits: prometheus.NewCounter(counterOpts("broker", "audits_total",
			"Audit runs comparing the broker's records with every site's reservations.")),
		drift: prometheus.NewCounterVec(counterOpts("broker", "audit_drift_found_total",
			"Discrepancies found by audits, by kind (missing, orphaned, drifted)."), []string{"kind"}),
		unanswered: prometheus.NewGauge(gaugeOpts("broker", "sites_unanswered",
			"Sites out of planning because their agent did not answer a reserve or release request (until it answers again).")),
		outsideWindow: prometheus.NewCounterVec(counterOpts("broker", "forecast_slots_outside_window_total",
			"Forecast slots that lay outside their forecast's window [generated, horizon] at intake, by action (clipped: partly outside, cut to the window; dropped: wholly outside). docs/formats.md."), []string{"action"}),
		ignoredEvents: prometheus.NewCounterVec(counterOpts("broker", "job_events_ignored_total",
			"Job events the broker did not apply, by reason (site-not-in-job: the publishing site holds no part of the job; unknown-job: no such job)."), []string{"reason"}),
		replanned: prometheus.NewCounterVec(counterOpts("broker", "replanned_jobs_total",
			"Waiting jobs planned again by a cycle, by reason (new: not in the last cycle's queue; time: time passed a start the answer depended on; changed: slots the job may use changed; full: every job, e.g. first cycle or a site's nodes changed)."), []string{"reason"}),
		reused: prometheus.NewCounter(counterOpts("broker", "reused_answers_total",
			"Waiting jobs whose last answer a cycle kept (nothing it depends on changed).")),
		jobStatesSeen: map[string]bool{},
	}
	for _, r := range []string{"new", "time", "changed", "full"} {
		b.replanned.WithLabelValues(r).Add(0)
	}
	for _, a := range []string{"clipped", "dropped"} {
		b.outsideWindow.WithLabelValues(a).Add(0)
	}
	for _, s := range []string{"fresh", "stale"} {
		b.sites.WithLabelValues(s).Set(0)
	}
	registerer(reg).MustRegister(b.info, b.cycleSeconds, b.cycles, b.lastCycle, b.planned,
		b.unplaced, b.jobs, b.sites, b.submissions, b.commits, b.rollbacks, b.noShows,
		b.audits, b.drift, b.unanswered, b.ignoredEvents, b.repairsFailed, b.replanned, b.reused, b.outsideWindow)
	b.leaderMetrics = newLeaderMetrics(reg)
	return b
}

// SetVersion sets lookahead_broker_info{version} to 1.
func (b *Broker) SetVersion(version string) {
	if b != nil {
		b.info.Reset()
		b.info.WithLabelValues(version).Set(1)
	}
}

// CycleDone records a planning cycle that took d, finished at end, and
// placed planned jobs while unplaced found no room.
func (b *Broker) CycleDone(d time.Duration, end time.Time, planned, unplaced int) {
	if b == nil {
		return
	}
	b.cycleSeconds.Observe(d.Seconds())
	b.cycles.Inc()
	b.lastCycle.Set(float64(end.Unix()))
	b.planned.Set(float64(planned))
	b.unplaced.Set(float64(unplaced))
}

// SetJobs sets the number of jobs in each state. States seen before and
// absent from byState drop to 0 rather than vanish.
func (b *Broker) SetJobs(byState map[string]int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.jobStatesSeen {
		if _, ok := byState[s]; !ok {
			b.jobs.WithLabelValues(s).Set(0)
		}
	}
	for s, n := range byState {
		b.jobStatesSeen[s] = true
		b.jobs.WithLabelValues(s).Set(float64(n))
	}
}

// SetSites sets how many sites are fresh (in planning) and stale.
func (b *Broker) SetSites(fresh, stale int) {
	if b != nil {
		b.sites.WithLabelValues("fresh").Set(float64(fresh))
		b.sites.WithLabelValues("stale").Set(float64(stale))
	}
}

// Submission records one submission answered with code (wire.CodeOK,
// wire.CodeInvalid, wire.CodeOverBudget, wire.CodeForbidden, ...).
func (b *Broker) Submission(code string) {
	if b != nil {
		b.submissions.WithLabelValues(code).Inc()
	}
}

// Committed records a job reserved on all its sites.
func (b *Broker) Committed() {
	if b != nil {
		b.commits.Inc()
	}
}

// RolledBack records a commit undone; reason is a stable code (stale,
// scheduler, timeout, recovery, ...), never free text.
func (b *Broker) RolledBack(reason string) {
	if b != nil {
		b.rollbacks.WithLabelValues(reason).Inc()
	}
}

// NoShowReleased records a reservation released because its job never ran.
func (b *Broker) NoShowReleased() {
	if b != nil {
		b.noShows.Inc()
	}
}

// AuditDone records one audit run and the discrepancies it found, by
// kind (Drift* constants).
func (b *Broker) AuditDone(found map[string]int) {
	if b == nil {
		return
	}
	b.audits.Inc()
	for kind, n := range found {
		b.drift.WithLabelValues(kind).Add(float64(n))
	}
}

// SetUnanswered sets how many sites do not answer reserve/release
// requests (out of planning until they answer again).
func (b *Broker) SetUnanswered(n int) {
	if b != nil {
		b.unanswered.Set(float64(n))
	}
}

// JobEventIgnored records a job event the broker did not apply; reason is
// a stable code (site-not-in-job, unknown-job), never free text.
func (b *Broker) JobEventIgnored(reason string) {
	if b != nil {
		b.ignoredEvents.WithLabelValues(reason).Inc()
	}
}

// AuditRepairsFailed records n audit repairs that could not be done.
func (b *Broker) AuditRepairsFailed(n int) {
	if b != nil {
		b.repairsFailed.Add(float64(n))
	}
}

// Replanned counts one cycle's kept answers and re-planned jobs by reason.
func (b *Broker) Replanned(reused int, byReason map[string]int) {
	if b == nil {
		return
	}
	b.reused.Add(float64(reused))
	for r, n := range byReason {
		b.replanned.WithLabelValues(r).Add(float64(n))
	}
}

// SlotsOutsideWindow counts one forecast's slots clipped to its window or
// dropped at intake.
func (b *Broker) SlotsOutsideWindow(clipped, dropped int) {
	if b != nil {
		b.outsideWindow.WithLabelValues("clipped").Add(float64(clipped))
		b.outsideWindow.WithLabelValues("dropped").Add(float64(dropped))
	}
}

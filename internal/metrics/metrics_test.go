package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestAgentRecords(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := NewAgent(reg)
	a.SetVersion("v1.2.3")
	a.ForecastBuilt(300 * time.Millisecond)
	a.ForecastBuilt(2 * time.Second)
	a.ForecastFailed("engine")
	for range 3 {
		a.Event(SourceServerLog)
	}
	a.Event(SourceRefresh)
	a.LineRejected(SourceAccounting)
	at := time.Unix(1763780000, 0)
	a.ForecastPublished(42, 100, 2048, at)
	a.ForecastPublished(43, 50, 1024, at.Add(time.Minute))
	a.HeartbeatPublished(at.Add(2 * time.Minute))
	a.PublishFailed()
	a.ReservationRequest("reserve", "ok")
	a.ReservationRequest("reserve", "stale")
	a.ReservationRequest("reserve", "ok")
	a.StartError(at, at.Add(-10*time.Minute))
	a.StartError(at, at.Add(2*time.Hour))
	a.StartError(at, at)

	want := `
# HELP lookahead_agent_events_total Change events seen, by source; events are hints that trigger a debounced forecast.
# TYPE lookahead_agent_events_total counter
lookahead_agent_events_total{source="refresh"} 1
lookahead_agent_events_total{source="server_log"} 3
# HELP lookahead_agent_forecast_encoded_bytes Size on the wire of the last published forecast, in bytes.
# TYPE lookahead_agent_forecast_encoded_bytes gauge
lookahead_agent_forecast_encoded_bytes 1024
# HELP lookahead_agent_forecast_revision Sequence number (revision) of the last published forecast.
# TYPE lookahead_agent_forecast_revision gauge
lookahead_agent_forecast_revision 43
# HELP lookahead_agent_forecasts_built_total Forecasts built successfully (snapshot, engine, slots).
# TYPE lookahead_agent_forecasts_built_total counter
lookahead_agent_forecasts_built_total 2
# HELP lookahead_agent_forecasts_published_total Messages published on the site's forecast subject, by kind (forecast, heartbeat).
# TYPE lookahead_agent_forecasts_published_total counter
lookahead_agent_forecasts_published_total{kind="forecast"} 2
lookahead_agent_forecasts_published_total{kind="heartbeat"} 1
# HELP lookahead_agent_last_publish_timestamp_seconds Unix time of the last successful forecast or heartbeat publication.
# TYPE lookahead_agent_last_publish_timestamp_seconds gauge
lookahead_agent_last_publish_timestamp_seconds 1.76378012e+09
# HELP lookahead_agent_published_slots Slots in the last published forecast.
# TYPE lookahead_agent_published_slots gauge
lookahead_agent_published_slots 50
# HELP lookahead_agent_slots_published_total Slots published, summed over every published forecast.
# TYPE lookahead_agent_slots_published_total counter
lookahead_agent_slots_published_total 150
# HELP lookahead_agent_reservation_requests_total Reservation service requests, by verb (reserve, release, list) and result code.
# TYPE lookahead_agent_reservation_requests_total counter
lookahead_agent_reservation_requests_total{code="ok",verb="reserve"} 2
lookahead_agent_reservation_requests_total{code="stale",verb="reserve"} 1
# HELP lookahead_agent_start_forecasts_checked_total Forecast start times checked against real starts, by outcome (early: started before the forecast, late, exact).
# TYPE lookahead_agent_start_forecasts_checked_total counter
lookahead_agent_start_forecasts_checked_total{outcome="early"} 1
lookahead_agent_start_forecasts_checked_total{outcome="exact"} 1
lookahead_agent_start_forecasts_checked_total{outcome="late"} 1
# HELP lookahead_agent_info Always 1; labels carry the agent's version.
# TYPE lookahead_agent_info gauge
lookahead_agent_info{version="v1.2.3"} 1
`
	names := []string{"lookahead_agent_events_total", "lookahead_agent_forecast_encoded_bytes",
		"lookahead_agent_forecast_revision", "lookahead_agent_forecasts_built_total",
		"lookahead_agent_forecasts_published_total", "lookahead_agent_last_publish_timestamp_seconds",
		"lookahead_agent_published_slots", "lookahead_agent_slots_published_total",
		"lookahead_agent_reservation_requests_total", "lookahead_agent_start_forecasts_checked_total",
		"lookahead_agent_info"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	checkHistogram(t, reg, "lookahead_agent_forecast_build_seconds", 2, 2.3)
	checkHistogram(t, reg, "lookahead_agent_start_forecast_error_seconds", 3, 600+7200)
	if got := testutil.ToFloat64(a.buildFailures.WithLabelValues("engine")); got != 1 {
		t.Errorf("forecast failures = %v, want 1", got)
	}
	if got := testutil.ToFloat64(a.rejected.WithLabelValues(SourceAccounting)); got != 1 {
		t.Errorf("rejected lines = %v, want 1", got)
	}
	if got := testutil.ToFloat64(a.publishFailures); got != 1 {
		t.Errorf("publish failures = %v, want 1", got)
	}
}

func TestBrokerRecords(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := NewBroker(reg)
	b.CycleDone(40*time.Millisecond, time.Unix(1763780000, 0), 7, 2)
	b.CycleDone(60*time.Millisecond, time.Unix(1763780030, 0), 5, 1)
	b.SetJobs(map[string]int{"waiting": 4, "reserved": 2})
	b.SetJobs(map[string]int{"running": 3, "reserved": 1})
	b.SetSites(3, 1)
	b.Submission("ok")
	b.Submission("over-budget")
	b.Committed()
	b.RolledBack("stale")
	b.NoShowReleased()
	b.AuditDone(map[string]int{DriftMissing: 1, DriftOrphaned: 2})
	b.AuditDone(map[string]int{DriftOrphaned: 1})
	b.AuditRepairsFailed(2)

	want := `
# HELP lookahead_broker_jobs Grid jobs known to the broker, by state.
# TYPE lookahead_broker_jobs gauge
lookahead_broker_jobs{state="reserved"} 1
lookahead_broker_jobs{state="running"} 3
lookahead_broker_jobs{state="waiting"} 0
# HELP lookahead_broker_sites Sites with a forecast, by freshness (fresh: in planning; stale: older than its TTL).
# TYPE lookahead_broker_sites gauge
lookahead_broker_sites{state="fresh"} 3
lookahead_broker_sites{state="stale"} 1
# HELP lookahead_broker_audit_drift_found_total Discrepancies found by audits, by kind (missing, orphaned, drifted).
# TYPE lookahead_broker_audit_drift_found_total counter
lookahead_broker_audit_drift_found_total{kind="missing"} 1
lookahead_broker_audit_drift_found_total{kind="orphaned"} 3
# HELP lookahead_broker_audit_repairs_failed_total Audit repairs that could not be done: refused by the site, failed, or a site that did not answer an audit with repair.
# TYPE lookahead_broker_audit_repairs_failed_total counter
lookahead_broker_audit_repairs_failed_total 2
# HELP lookahead_broker_audits_total Audit runs comparing the broker's records with every site's reservations.
# TYPE lookahead_broker_audits_total counter
lookahead_broker_audits_total 2
# HELP lookahead_broker_cycles_total Planning cycles run.
# TYPE lookahead_broker_cycles_total counter
lookahead_broker_cycles_total 2
# HELP lookahead_broker_planned_jobs Jobs the last cycle found an allocation for.
# TYPE lookahead_broker_planned_jobs gauge
lookahead_broker_planned_jobs 5
# HELP lookahead_broker_rollbacks_total Commits rolled back (reservations released), by reason code.
# TYPE lookahead_broker_rollbacks_total counter
lookahead_broker_rollbacks_total{reason="stale"} 1
# HELP lookahead_broker_commits_total Jobs reserved on every involved site (all-or-nothing commit succeeded).
# TYPE lookahead_broker_commits_total counter
lookahead_broker_commits_total 1
# HELP lookahead_broker_submissions_total Job submissions received, by result code.
# TYPE lookahead_broker_submissions_total counter
lookahead_broker_submissions_total{code="ok"} 1
lookahead_broker_submissions_total{code="over-budget"} 1
`
	names := []string{"lookahead_broker_jobs", "lookahead_broker_sites",
		"lookahead_broker_audit_drift_found_total", "lookahead_broker_audit_repairs_failed_total", "lookahead_broker_audits_total",
		"lookahead_broker_cycles_total", "lookahead_broker_planned_jobs",
		"lookahead_broker_rollbacks_total", "lookahead_broker_commits_total",
		"lookahead_broker_submissions_total"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	checkHistogram(t, reg, "lookahead_broker_cycle_seconds", 2, 0.1)
}

// checkHistogram finds the histogram name in reg and checks its sample
// count and sum.
func checkHistogram(t *testing.T, reg prometheus.Gatherer, name string, count uint64, sum float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != count || abs(h.GetSampleSum()-sum) > 1e-9 {
			t.Errorf("%s: count %d sum %v, want %d %v", name, h.GetSampleCount(), h.GetSampleSum(), count, sum)
		}
		return
	}
	t.Errorf("%s not gathered", name)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestNilSetsDoNothing(t *testing.T) {
	var a *Agent
	a.SetVersion("x")
	a.ForecastBuilt(time.Second)
	a.ForecastFailed("engine")
	a.Event(SourceRefresh)
	a.LineRejected(SourceServerLog)
	a.ForecastPublished(1, 1, 1, time.Now())
	a.HeartbeatPublished(time.Now())
	a.PublishFailed()
	a.ReservationRequest("reserve", "ok")
	a.StartError(time.Now(), time.Now())
	var b *Broker
	b.SetVersion("x")
	b.CycleDone(time.Second, time.Now(), 1, 1)
	b.SetJobs(map[string]int{"waiting": 1})
	b.SetSites(1, 1)
	b.Submission("ok")
	b.Committed()
	b.RolledBack("stale")
	b.NoShowReleased()
	b.AuditDone(map[string]int{DriftMissing: 1})
}

func TestSeveralAgentsShareARegistry(t *testing.T) {
	reg := NewRegistry()
	alpha := NewAgent(prometheus.WrapRegistererWith(prometheus.Labels{"site": "alpha"}, reg))
	beta := NewAgent(prometheus.WrapRegistererWith(prometheus.Labels{"site": "beta"}, reg))
	alpha.ForecastBuilt(time.Second)
	beta.ForecastBuilt(time.Second)
	beta.ForecastBuilt(time.Second)
	n, err := testutil.GatherAndCount(reg, "lookahead_agent_forecasts_built_total")
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("got %d series of forecasts_built_total, want one per site", n)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func TestMetricNamesPassLint(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := NewAgent(reg)
	b := NewBroker(reg)
	a.Event(SourceRefresh)
	a.ReservationRequest("reserve", "ok")
	a.ForecastFailed("engine")
	a.LineRejected(SourceServerLog)
	a.StartError(time.Now(), time.Now())
	a.SetVersion("v")
	b.SetVersion("v")
	b.SetJobs(map[string]int{"waiting": 1})
	b.RolledBack("stale")
	b.Submission("ok")
	b.AuditDone(map[string]int{DriftMissing: 1})
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"lookahead/internal/metrics"
	"lookahead/wire"
)

// counter reads one labelled counter from reg (0 when absent).
func counter(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// Issue 22.8: a job no known site could hold is refused with the size;
// a huge request_id is refused as invalid, not as an internal error of
// the job stream (it went into the message id header and over the
// server's max_payload).
func TestSubmitRefusesTooBigJobAndRequestID(t *testing.T) {
	e := newEnv(t)
	e.publish("alpha", 1, 4, 8, 1) // 32 procs
	e.publish("beta", 1, 2, 8, 1)  // 16 procs
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	big := job(1_000_000, 3600, 1)
	if rep := submit(t, r.b, "k1", big); rep.Code != wire.CodeNoCapacity || !strings.Contains(rep.Message, "the whole grid known (2 sites: alpha, beta) has 48") {
		t.Fatalf("a million processors: %+v", rep)
	}
	one := job(33, 3600, 1)
	one.MaxSites = 1
	if rep := submit(t, r.b, "k2", one); rep.Code != wire.CodeNoCapacity || !strings.Contains(rep.Message, "the largest site known (alpha) has 32") {
		t.Fatalf("33 processors on one site: %+v", rep)
	}
	if rep := submit(t, r.b, strings.Repeat("x", 900<<10), job(8, 3600, 1)); rep.Code != wire.CodeInvalid || !strings.Contains(rep.Message, "request_id of 921600 bytes") {
		t.Fatalf("900 KB request_id: %s %.200q", rep.Code, rep.Message)
	}
}

// Issue 22.8: a job event from a site that holds no part of the job is
// logged and counted, and changes nothing.
func TestJobEventFromSiteNotInJobCounted(t *testing.T) {
	e := newEnv(t)
	e.startSite("beta")
	e.publish("beta", 1, 2, 8, 1)
	reg := prometheus.NewRegistry()
	r := e.startBroker(func(c *Config) { c.Metrics = metrics.NewBroker(reg) })
	e.waitSites(r.b, 1)
	g := submit(t, r.b, "k1", job(8, 3600, 2)) // on beta; alpha (an agent of the grid) holds no part
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := status(t, r.b, g.Job); s.State != wire.JobReserved || s.Plan.Sites()[0] != "beta" {
		t.Fatalf("setup: %+v", s)
	}
	data, _ := json.Marshal(wire.JobEvent{Type: wire.TypeJobEvent, Site: "alpha", Job: g.Job, State: "finished"})
	if err := e.nc.Publish(wire.JobEventSubject("alpha", g.Job), data); err != nil {
		t.Fatal(err)
	}
	e.nc.Flush()
	deadline := time.Now().Add(5 * time.Second)
	for counter(t, reg, "lookahead_broker_job_events_ignored_total", "reason", "site-not-in-job") < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := counter(t, reg, "lookahead_broker_job_events_ignored_total", "reason", "site-not-in-job"); n != 1 {
		t.Fatalf("ignored job events counted %v, want 1", n)
	}
	if s := status(t, r.b, g.Job); s.State != wire.JobReserved {
		t.Fatalf("alpha's event moved beta's job to %s", s.State)
	}
}

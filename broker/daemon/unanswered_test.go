package daemon

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"lookahead/internal/metrics"
	"lookahead/wire"
)

// gauge reads one unlabelled gauge from reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// A site that publishes forecasts but never answers reserve or release
// requests holds no job: the job whose commit it left unanswered is
// planned on the other site at the next cycle (its release on the silent
// site stays owed), the site is out of planning with its reason until it
// answers, and then the owed release is delivered.
func TestUnansweringSiteHoldsNoJob(t *testing.T) {
	e := newEnv(t)
	beta := e.startSite("beta") // alpha publishes, but no agent serves its requests
	e.publish("alpha", 1, 4, 8, 1)
	e.publish("beta", 1, 4, 8, 1)
	reg := prometheus.NewRegistry()
	m := metrics.NewBroker(reg)
	r := e.startBroker(func(c *Config) { c.Metrics = m })
	e.waitSites(r.b, 2)
	var ids []string
	for _, k := range []string{"k1", "k2", "k3"} {
		rep := submit(t, r.b, k, job(8, 3600, 2))
		if rep.Code != wire.CodeOK {
			t.Fatalf("submit: %+v", rep)
		}
		ids = append(ids, rep.Job)
	}
	cycle := func() {
		t.Helper()
		if err := r.b.Cycle(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	cycle()
	first := status(t, r.b, ids[0])
	if first.State != wire.JobWaiting || !slices.Contains(first.Releasing, "alpha") {
		t.Fatalf("after the unanswered commit: %s, releasing %v (%s)", first.State, first.Releasing, first.Message)
	}
	// The other jobs planned on alpha in the same cycle are not sent to
	// the site that just left a request unanswered.
	for _, id := range ids[1:] {
		if st := status(t, r.b, id); st.Attempts != 0 || len(st.Releasing) != 0 {
			t.Fatalf("job %s was committed on the silent site: attempts %d, releasing %v", id, st.Attempts, st.Releasing)
		}
	}
	alpha := siteStatus(t, r.b, "alpha")
	if !alpha.Excluded || !alpha.Stale || !strings.Contains(alpha.Unanswered, "no responders") || alpha.UnansweredSince == 0 {
		t.Fatalf("alpha after no answer: %+v", alpha)
	}
	if got := gauge(t, reg, "lookahead_broker_sites_unanswered"); got != 1 {
		t.Fatalf("lookahead_broker_sites_unanswered = %v, want 1", got)
	}
	// A newer forecast from alpha proves nothing about answering.
	e.clock.Add(30e9)
	e.publish("alpha", 2, 4, 8, 1)
	waitSeqSite(t, r.b, "alpha", 2)
	cycle()
	for _, id := range ids {
		st := status(t, r.b, id)
		if st.State != wire.JobReserved || len(st.Reservations) == 0 || st.Reservations[0].Site != "beta" {
			t.Fatalf("job %s: %s on %v (%s), want reserved on beta", id, st.State, st.Reservations, st.Message)
		}
	}
	if plan := r.b.Plan(); !slices.Contains(plan.Excluded, "alpha") {
		t.Fatalf("plan excluded %v, want alpha", plan.Excluded)
	}
	if st := status(t, r.b, ids[0]); !slices.Contains(st.Releasing, "alpha") {
		t.Fatalf("the release owed on alpha was dropped: %v", st.Releasing)
	}
	// alpha's agent answers again: the owed release is delivered and the
	// site is back in planning.
	a := e.startSite("alpha")
	waitServed(t, e, "alpha")
	cycleUntilAnswers(t, r.b, "alpha")
	cycle()
	if st := status(t, r.b, ids[0]); len(st.Releasing) != 0 {
		t.Fatalf("release still owed on %v", st.Releasing)
	}
	a.mu.Lock()
	released := a.calls["release"]
	a.mu.Unlock()
	if released == 0 {
		t.Fatal("alpha never got the owed release")
	}
	if alpha := siteStatus(t, r.b, "alpha"); alpha.Excluded || alpha.Unanswered != "" {
		t.Fatalf("alpha after answering: %+v", alpha)
	}
	if got := gauge(t, reg, "lookahead_broker_sites_unanswered"); got != 0 {
		t.Fatalf("lookahead_broker_sites_unanswered = %v, want 0", got)
	}
	if len(beta.held()) != 3 {
		t.Fatalf("beta holds %d jobs, want 3", len(beta.held()))
	}
}

// An unanswering site owed no release is knocked at (a read-only list
// request) and comes back once it answers.
func TestUnansweringSiteProbedWithoutOwedRelease(t *testing.T) {
	e := newEnv(t)
	e.publish("alpha", 1, 4, 8, 1)
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	r.b.heard("alpha", "release g9", errNoResponders(t, e))
	if !siteStatus(t, r.b, "alpha").Excluded {
		t.Fatal("alpha not excluded after no answer")
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !siteStatus(t, r.b, "alpha").Excluded {
		t.Fatal("alpha back in planning without answering")
	}
	e.startSite("alpha")
	waitServed(t, e, "alpha")
	cycleUntilAnswers(t, r.b, "alpha")
	if s := siteStatus(t, r.b, "alpha"); s.Excluded {
		t.Fatalf("alpha answered the probe but is still out: %+v", s)
	}
}

// cycleUntilAnswers runs cycles until the broker has learnt that site
// answers again: the knock that finds it out runs in the background, so
// the cycle that sends it does not wait for its answer.
func cycleUntilAnswers(t *testing.T, b *Broker, site string) {
	t.Helper()
	for i := 0; siteStatus(t, b, site).Unanswered != ""; i++ {
		if i == 250 {
			t.Fatalf("%s answers, but the broker never learnt it", site)
		}
		if err := b.Cycle(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// errNoResponders is the error a real request to a subject nobody serves
// returns.
func errNoResponders(t *testing.T, e *env) error {
	t.Helper()
	_, err := connect(t, e.srv).Request(wire.AgentSubject("nobody", wire.VerbRelease), []byte("{}"), 2e9)
	if err == nil {
		t.Fatal("a request nobody serves was answered")
	}
	return err
}

// waitServed waits until site's agent endpoints are subscribed on the
// server (a new service's subscriptions reach it asynchronously).
func waitServed(t *testing.T, e *env, site string) {
	t.Helper()
	nc := connect(t, e.srv)
	for range 100 {
		if _, err := nc.Request(wire.AgentSubject(site, wire.VerbList), []byte("{}"), 2e9); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s's agent endpoints never served", site)
}

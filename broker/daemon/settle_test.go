package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// Issue 12.10(a): the outcome of a commit could not be recorded, so the
// job stayed committing with its reservations held until a restart. The
// running broker now rolls it back at the next cycle and releases them.
func TestUnrecordedOutcomeIsSettledByTheRunningBroker(t *testing.T) {
	e := newEnv(t)
	a := e.startSite("alpha")
	e.putForecast("alpha", e.siteForecast("alpha", 1, 2, 8))
	var failOutcome atomic.Bool
	failOutcome.Store(true)
	r := e.startBrokerFaults(Faults{AppendError: func(ev broker.Event) error {
		if ev.Kind == broker.EvOutcome && failOutcome.Load() {
			return errors.New("injected: the job stream refuses the outcome")
		}
		return nil
	}}, nil)
	e.waitSites(r.b, 1)
	g := submit(t, r.b, "k1", job(8, 3600, 2))
	if err := r.b.Cycle(context.Background()); err == nil || !strings.Contains(err.Error(), "not recorded") {
		t.Fatalf("cycle: %v", err)
	}
	if s := status(t, r.b, g.Job); s.State != wire.JobCommitting || len(a.held()[g.Job]) != 1 {
		t.Fatalf("after the failed outcome: %s, held %v", s.State, a.held())
	}
	if ok, why := r.b.Healthy(); ok || !strings.Contains(why, "job stream") {
		t.Fatalf("healthy while the job stream refuses events: %v %q", ok, why)
	}
	failOutcome.Store(false)
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The cycle rolled the commit back, released the site, planned the
	// job again and reserved it anew.
	s := status(t, r.b, g.Job)
	if s.State != wire.JobReserved || s.Attempts != 2 || a.calls["release"] != 1 || len(a.held()[g.Job]) != 1 {
		t.Fatalf("after the next cycle: %s, attempt %d, %d releases, held %v", s.State, s.Attempts, a.calls["release"], a.held())
	}
	if ok, why := r.b.Healthy(); !ok {
		t.Fatalf("not healthy once the stream works again: %s", why)
	}
}

// Issue 12.10(f): ended jobs are forgotten after the retention period, a
// snapshot replaces the events before it (which are purged), and a
// restarted broker rebuilds the same queue and budgets from it.
func TestSnapshotRetainsAndBoundsTheJobStream(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	e.putForecast("alpha", e.siteForecast("alpha", 1, 4, 8))
	cfg := func(c *Config) { c.Retain = 24 * time.Hour }
	r := e.startBroker(cfg)
	e.waitSites(r.b, 1)
	var ids []string
	for i := range 6 {
		ids = append(ids, submit(t, r.b, "k"+string(rune('a'+i)), job(8, 600, 1)).Job)
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[:4] { // four ran and finished
		for _, st := range []string{broker.SiteStarted, broker.SiteFinished} {
			r.b.mu.Lock()
			err := r.b.record(context.Background(), broker.Event{Kind: broker.EvSite, Time: r.b.now(), Job: id, Site: "alpha", State: st})
			r.b.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// their reservations' rest goes back to the site (owed when a job
	// ends): a cycle releases it, and only then can they be forgotten
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(25 * time.Hour)
	late := submit(t, r.b, "late", job(1, 60, 1))
	before := r.b.Status(wire.StatusRequest{All: true})
	used := usedBy(r.b, "proj1")
	msgs := streamMsgs(t, e)
	if err := r.b.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := r.b.Status(wire.StatusRequest{All: true})
	if len(after.Jobs) != len(before.Jobs)-4 {
		t.Fatalf("%d jobs after the snapshot, want %d (the four finished ones forgotten)", len(after.Jobs), len(before.Jobs)-4)
	}
	if got := usedBy(r.b, "proj1"); got != used {
		t.Fatalf("budget use %v after forgetting, was %v", got, used)
	}
	if n := streamMsgs(t, e); n >= msgs || n != 2 {
		t.Fatalf("job stream holds %d messages after the snapshot (was %d), want the snapshot and a copy of the term's record", n, msgs)
	}
	js, _ := e.js.Stream(context.Background(), wire.JobStream)
	if m, err := js.GetLastMsgForSubject(context.Background(), wire.JobEpochSubject); err != nil || !strings.Contains(string(m.Data), fmt.Sprintf(`"epoch":%d`, r.b.Epoch())) {
		t.Fatalf("last term record after the purge: %v %v, want a copy naming epoch %d", m, err, r.b.Epoch())
	}
	r.stop()
	r2 := e.startBroker(cfg)
	restored := r2.b.Status(wire.StatusRequest{All: true})
	if len(restored.Jobs) != len(after.Jobs) || restored.Jobs[len(restored.Jobs)-1].Job.ID != late.Job {
		t.Fatalf("restored %d jobs, want %d", len(restored.Jobs), len(after.Jobs))
	}
	if got := usedBy(r2.b, "proj1"); got != used {
		t.Fatalf("budget use %v after a restart from the snapshot, was %v", got, used)
	}
	if next := submit(t, r2.b, "next", job(1, 60, 1)); next.Job != "g8" {
		t.Fatalf("next id %s, want g8", next.Job)
	}
}

func usedBy(b *Broker, account string) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state.Used(account, false)
}

func streamMsgs(t *testing.T, e *env) uint64 {
	t.Helper()
	s, err := e.js.Stream(context.Background(), wire.JobStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// Issue 12.9: readiness follows what works: a failing planning cycle or
// a lost NATS connection makes the broker unhealthy, with the reason.
func TestHealthFollowsCyclesAndNATS(t *testing.T) {
	e := newEnv(t)
	var fail atomic.Bool
	r := e.startBroker(func(c *Config) {
		c.UsePlanner(NewPlanner(PlannerOptions{}))
		plan := c.Planner
		c.Planner = func(fcs []forecast.Forecast, jobs []forecast.JobRequest, nb int64) ([]forecast.Allocation, error) {
			if fail.Load() {
				return nil, errors.New("injected planner failure")
			}
			return plan(fcs, jobs, nb)
		}
	})
	e.putForecast("alpha", e.siteForecast("alpha", 1, 1, 8))
	e.waitSites(r.b, 1)
	submit(t, r.b, "k", job(1, 60, 1))
	if ok, why := r.b.Healthy(); !ok {
		t.Fatalf("a fresh broker is not healthy: %s", why)
	}
	fail.Store(true)
	r.b.health.cycleDone(time.Now(), r.b.Cycle(context.Background()))
	if ok, why := r.b.Healthy(); ok || !strings.Contains(why, "injected planner failure") {
		t.Fatalf("healthy with a failing cycle: %v %q", ok, why)
	}
	fail.Store(false)
	r.b.health.cycleDone(time.Now(), r.b.Cycle(context.Background()))
	if ok, why := r.b.Healthy(); !ok {
		t.Fatalf("still unhealthy after a good cycle: %s", why)
	}
	e.srv.Shutdown()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ok, why := r.b.Healthy(); !ok && strings.HasPrefix(why, "nats") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ok, why := r.b.Healthy()
	t.Fatalf("healthy without NATS: %v %q", ok, why)
}

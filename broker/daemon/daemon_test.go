package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

func job(procs int, wall int64, price float64) forecast.JobRequest {
	return forecast.JobRequest{Procs: procs, Walltime: wall, MaxPrice: price, User: "alice", Account: "proj1"}
}

func submit(t *testing.T, b *Broker, reqID string, j forecast.JobRequest) wire.SubmitReply {
	t.Helper()
	rep := b.Submit(context.Background(), "alice", wire.SubmitRequest{Type: wire.TypeSubmit, RequestID: reqID, Job: j})
	return rep
}

func status(t *testing.T, b *Broker, id string) wire.JobStatus {
	t.Helper()
	rep := b.Status(wire.StatusRequest{Job: id})
	if len(rep.Jobs) != 1 {
		t.Fatalf("status of %s: %+v", id, rep)
	}
	return rep.Jobs[0]
}

func TestTwoSiteJobReservedOnBothWithSameStart(t *testing.T) {
	e := newEnv(t)
	a, c := e.startSite("alpha"), e.startSite("beta")
	e.publish("alpha", 1, 4, 8, 1) // 32 procs
	e.publish("beta", 1, 4, 8, 1)  // 32 procs
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	rep := submit(t, r.b, "k1", job(48, 3600, 2))
	if rep.Code != wire.CodeOK {
		t.Fatalf("submit: %+v", rep)
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := status(t, r.b, rep.Job)
	if st.State != wire.JobReserved {
		t.Fatalf("state %s (%s), want reserved", st.State, st.Message)
	}
	ha, hb := a.held()[rep.Job], c.held()[rep.Job]
	if len(ha) != 1 || len(hb) != 1 {
		t.Fatalf("reservations alpha %v beta %v", ha, hb)
	}
	if ha[0].Start != hb[0].Start || ha[0].End != hb[0].End || ha[0].Start != st.Plan.Start {
		t.Fatalf("starts differ: alpha %d beta %d plan %d", ha[0].Start, hb[0].Start, st.Plan.Start)
	}
	procs := 0
	for _, n := range append(ha[0].Nodes, hb[0].Nodes...) {
		procs += n.Procs
	}
	if procs != 48 || ha[0].Identity.Account != "proj1" {
		t.Fatalf("reserved %d procs, identity %+v", procs, ha[0].Identity)
	}
	if st.Cost <= 0 {
		t.Fatalf("no cost charged: %+v", st)
	}
}

func TestRefusingSiteMakesTheOtherRelease(t *testing.T) {
	e := newEnv(t)
	a, c := e.startSite("alpha"), e.startSite("beta")
	c.refuse = wire.CodeStale
	e.publish("alpha", 1, 4, 8, 1)
	e.publish("beta", 1, 4, 8, 1)
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	rep := submit(t, r.b, "k1", job(48, 3600, 2))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := status(t, r.b, rep.Job)
	if st.State != wire.JobWaiting || !strings.Contains(st.Message, "beta: stale") {
		t.Fatalf("after refusal: %s %q", st.State, st.Message)
	}
	if len(a.held()) != 0 || len(c.held()) != 0 {
		t.Fatalf("left reservations: alpha %v beta %v", a.held(), c.held())
	}
	if a.calls["release"] == 0 {
		t.Fatal("alpha was never asked to release")
	}
	// Beta said stale: no retry on the same forecast revision.
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := c.calls["reserve"]; n != 1 {
		t.Fatalf("beta asked %d times on the revision it called stale", n)
	}
	// Once beta publishes a newer forecast and agrees, the job is reserved.
	c.mu.Lock()
	c.refuse = ""
	c.mu.Unlock()
	e.publish("beta", 2, 4, 8, 1)
	waitSeqSite(t, r.b, "beta", 2)
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := status(t, r.b, rep.Job); st.State != wire.JobReserved || st.Attempts != 2 {
		t.Fatalf("second attempt: %s attempts %d", st.State, st.Attempts)
	}
}

func TestBrokerKilledMidCommitRecovers(t *testing.T) {
	e := newEnv(t)
	a, c := e.startSite("alpha"), e.startSite("beta")
	c.delay = 300 * time.Millisecond // alpha answers first
	e.publish("alpha", 1, 4, 8, 1)
	e.publish("beta", 1, 4, 8, 1)
	crash := e.startBrokerFaults(Faults{Point: func(p string) bool { return p == "answer:alpha" }}, nil)
	e.waitSites(crash.b, 2)
	rep := submit(t, crash.b, "k1", job(48, 3600, 2))
	if err := crash.b.Cycle(context.Background()); err != ErrCrashed {
		t.Fatalf("cycle: %v, want the injected crash", err)
	}
	crash.stop()
	time.Sleep(500 * time.Millisecond) // beta's reserve, if it was sent, lands after the "death"
	if len(a.held()) != 1 || len(c.held()) > 1 {
		t.Fatalf("before recovery: alpha %v beta %v", a.held(), c.held())
	}
	r := e.startBroker(nil)
	if st := status(t, r.b, rep.Job); st.State != wire.JobWaiting || !strings.Contains(st.Message, "rolled back") {
		t.Fatalf("after recovery: %s %q", st.State, st.Message)
	}
	// Fresh forecasts, the releases owed but not yet due: the job is not
	// reserved again on a site that still owes its release (the release
	// would take the new reservation: docs/broker.md, safety point 3).
	e.publish("alpha", 2, 4, 8, 1)
	e.publish("beta", 2, 4, 8, 1)
	waitSeq(t, r.b, 2)
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := status(t, r.b, rep.Job); st.State != wire.JobWaiting {
		t.Fatalf("reserved again while its releases are owed: %s %q", st.State, st.Message)
	}
	e.clock.Add(10 * time.Second) // past the reserve deadline: the releases are due
	e.publish("alpha", 3, 4, 8, 1)
	e.publish("beta", 3, 4, 8, 1)
	waitSeq(t, r.b, 3)
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := status(t, r.b, rep.Job)
	if st.State != wire.JobReserved {
		t.Fatalf("after replanning: %s %q", st.State, st.Message)
	}
	// Consistent: every site reservation is one the broker believes in and vice versa.
	audit := r.b.Audit(context.Background(), false)
	if len(audit.Findings) != 0 || audit.Checked != 2 {
		t.Fatalf("audit after recovery: %+v", audit)
	}
	if got := r.b.state.OwedReleases(e.clock.Now().Unix()); len(got) != 0 {
		t.Fatalf("releases still owed: %v", got)
	}
}

func waitSeq(t *testing.T, b *Broker, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ok := true
		for _, s := range b.Sites().Sites {
			ok = ok && s.Seq >= seq
		}
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("sites not at seq %d: %+v", seq, b.Sites().Sites)
}

func TestSilentSiteExcludedAfterTTL(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	e.startSite("beta")
	e.publish("alpha", 1, 4, 8, 1)
	e.publish("beta", 1, 4, 8, 1)
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	e.clock.Add(4 * time.Minute)
	e.publish("alpha", 2, 4, 8, 1) // alpha stays alive, beta goes silent
	waitSeqSite(t, r.b, "alpha", 2)
	e.clock.Add(2 * time.Minute) // beta: 6 min silent > 5 min TTL
	sites := r.b.Sites().Sites
	if sites[0].Stale || !sites[1].Stale {
		t.Fatalf("staleness: %+v", sites)
	}
	rep := submit(t, r.b, "k1", job(48, 3600, 2)) // needs both sites
	small := submit(t, r.b, "k2", job(16, 3600, 1))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := r.b.Plan()
	if len(p.Sites) != 1 || p.Sites[0] != "alpha" || len(p.Stale) != 1 {
		t.Fatalf("plan sites %v stale %v", p.Sites, p.Stale)
	}
	if st := status(t, r.b, rep.Job); st.State != wire.JobWaiting {
		t.Fatalf("two-site job %s with one site stale", st.State)
	}
	if st := status(t, r.b, small.Job); st.State != wire.JobReserved || st.Plan.Parts[0].Site != "alpha" {
		t.Fatalf("small job: %+v", st)
	}
}

func waitSeqSite(t *testing.T, b *Broker, site string, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range b.Sites().Sites {
			if s.Site == site && s.Seq >= seq {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("site %s not at seq %d", site, seq)
}

func TestRetriedSubmissionCreatesOneJob(t *testing.T) {
	e := newEnv(t)
	r := e.startBroker(nil)
	first := submit(t, r.b, "retry-1", job(4, 60, 1))
	second := submit(t, r.b, "retry-1", job(4, 60, 1))
	if first.Job == "" || second.Job != first.Job || !second.Duplicate {
		t.Fatalf("first %+v second %+v", first, second)
	}
	r.stop()
	// After a restart the request id is still known (rebuilt from the stream).
	r2 := e.startBroker(nil)
	third := submit(t, r2.b, "retry-1", job(4, 60, 1))
	if third.Job != first.Job || !third.Duplicate {
		t.Fatalf("after restart: %+v", third)
	}
	if n := len(r2.b.Status(wire.StatusRequest{All: true}).Jobs); n != 1 {
		t.Fatalf("%d jobs, want 1", n)
	}
}

func TestOverBudgetRefusedClearly(t *testing.T) {
	e := newEnv(t)
	r := e.startBroker(func(c *Config) {
		c.Policy.Budgets = broker.Budgets{Accounts: map[string]float64{"proj1": 100}}
	})
	rep := submit(t, r.b, "k1", job(64, 7200, 1)) // worst case 128 credits
	if rep.Code != wire.CodeOverBudget || !strings.Contains(rep.Message, "account proj1: budget 100.00") {
		t.Fatalf("reply %+v", rep)
	}
	if n := len(r.b.Status(wire.StatusRequest{All: true}).Jobs); n != 0 {
		t.Fatalf("refused job stored: %d jobs", n)
	}
}

func TestAuditFindsRemovedAndAddedReservations(t *testing.T) {
	e := newEnv(t)
	a, c := e.startSite("alpha"), e.startSite("beta")
	e.publish("alpha", 1, 4, 8, 1)
	e.publish("beta", 1, 4, 8, 1)
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	rep := submit(t, r.b, "k1", job(48, 3600, 2))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rep := r.b.Audit(context.Background(), false); len(rep.Findings) != 0 {
		t.Fatalf("clean audit found %+v", rep.Findings)
	}
	// Behind the broker's back: alpha's reservation is removed, beta gets a new one.
	a.mu.Lock()
	delete(a.res, rep.Job)
	a.mu.Unlock()
	now := e.clock.Now().Unix()
	c.mu.Lock()
	c.res["rogue"] = []wire.Reservation{{ID: "rogue.0", Job: "rogue", Site: "beta", Start: now, End: now + 600,
		Nodes: []wire.NodeProcs{{Node: "beta00", Procs: 8}}}}
	c.mu.Unlock()
	got := r.b.Audit(context.Background(), true)
	if len(got.Findings) != 2 {
		t.Fatalf("findings %+v", got.Findings)
	}
	miss, orphan := got.Findings[0], got.Findings[1]
	if miss.Kind != wire.DriftMissing || miss.Site != "alpha" || miss.Job != rep.Job ||
		orphan.Kind != wire.DriftOrphaned || orphan.Site != "beta" || orphan.Job != "rogue" {
		t.Fatalf("findings %+v", got.Findings)
	}
	if !strings.HasPrefix(miss.Repair, "re-reserved") || !strings.HasPrefix(orphan.Repair, "released") {
		t.Fatalf("repairs: %q / %q", miss.Repair, orphan.Repair)
	}
	if again := r.b.Audit(context.Background(), false); len(again.Findings) != 0 {
		t.Fatalf("after repair: %+v", again.Findings)
	}
}

func TestCancelReservedJobReleasesAndRefunds(t *testing.T) {
	e := newEnv(t)
	a := e.startSite("alpha")
	e.publish("alpha", 1, 4, 8, 1)
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	rep := submit(t, r.b, "k1", job(8, 3600, 1))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(a.held()) != 1 {
		t.Fatal("not reserved")
	}
	cr := r.b.Cancel(context.Background(), "alice", rep.Job)
	if cr.Code != wire.CodeOK {
		t.Fatalf("cancel: %+v", cr)
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(a.held()) != 0 {
		t.Fatalf("reservation left after cancel: %v", a.held())
	}
	if st := status(t, r.b, rep.Job); st.State != wire.JobCancelled || st.Cost != 0 {
		t.Fatalf("after cancel: %+v", st)
	}
}

func TestNoShowReleasedAtEndAndSiteReportsFollowed(t *testing.T) {
	e := newEnv(t)
	a := e.startSite("alpha")
	e.publish("alpha", 1, 4, 8, 1)
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	noShow := submit(t, r.b, "k1", job(8, 600, 1))
	runs := submit(t, r.b, "k2", job(8, 600, 1))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(a.held()) != 2 {
		t.Fatalf("held %v", a.held())
	}
	// The site reports the second job's part started, then finished.
	nc := connect(t, e.srv)
	report := func(state string) {
		data, _ := json.Marshal(wire.JobEvent{Type: wire.TypeJobEvent, Site: "alpha", Job: runs.Job, State: state})
		if err := nc.Publish(wire.JobEventSubject("alpha", runs.Job), data); err != nil {
			t.Fatal(err)
		}
		nc.Flush()
	}
	report("started")
	waitState(t, r.b, runs.Job, wire.JobRunning)
	e.clock.Add(2 * time.Hour) // both reservations ended
	e.publish("alpha", 2, 4, 8, 1)
	waitSeqSite(t, r.b, "alpha", 2)
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := status(t, r.b, noShow.Job); st.State != wire.JobExpired {
		t.Fatalf("no-show: %s", st.State)
	}
	if _, still := a.held()[noShow.Job]; still {
		t.Fatal("no-show reservation not released")
	}
	report("finished")
	waitState(t, r.b, runs.Job, wire.JobFinished)
}

func waitState(t *testing.T, b *Broker, id, state string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if status(t, b, id).State == state {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: %s, want %s", id, status(t, b, id).State, state)
}

// A forecast read back from the bucket when the broker starts was received
// earlier, at a time the broker does not know: it gives no clock offset
// (seen live: after a restart an agent stopped 4 minutes before showed
// "CLOCK -4m"), and it is as old as it says, so a silent site is stale.
func TestStoredForecastGivesNoClockOffset(t *testing.T) {
	e := newEnv(t)
	e.publish("a", 1, 2, 4, 1)
	e.clock.Add(4 * time.Minute)
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	s := r.b.Sites().Sites[0]
	if s.ClockOffset != 0 {
		t.Errorf("clock offset %d s from a stored forecast, want 0 (unknown)", s.ClockOffset)
	}
	e.clock.Add(3 * time.Minute)
	if s := r.b.Sites().Sites[0]; !s.Stale {
		t.Errorf("a forecast generated 7 minutes ago (TTL 5m, skew 1m) is fresh: %+v", s)
	}
	e.publish("a", 2, 2, 4, 1) // a live one: generated now, received now
	deadline := time.Now().Add(5 * time.Second)
	for r.b.Sites().Sites[0].Seq != 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := r.b.Sites().Sites[0]; s.Seq != 2 || s.Stale || s.ClockOffset != 0 {
		t.Errorf("after a live forecast: %+v", s)
	}
}

// An agent's offline notice on its subject takes the site out of planning
// at once; its next forecast brings it back.
func TestOfflineNoticeTakesSiteOut(t *testing.T) {
	e := newEnv(t)
	e.publish("a", 1, 2, 4, 1)
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	data, _ := json.Marshal(wire.Heartbeat{Type: wire.TypeHeartbeat, Site: "a", Seq: 1, Generated: e.clock.Now().Unix(), Offline: true})
	msg := nats.NewMsg(wire.ForecastSubject("a"))
	msg.Header.Set(wire.HeaderType, wire.TypeHeartbeat)
	msg.Data = data
	if err := e.nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !r.b.Sites().Sites[0].Stale && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := r.b.Sites().Sites[0]; !s.Stale || !strings.Contains(s.Problem, "agent stopped") {
		t.Fatalf("after the offline notice: %+v", s)
	}
	e.clock.Add(time.Minute)
	e.publish("a", 1, 2, 4, 1) // the agent started again: a new incarnation
	for r.b.Sites().Sites[0].Stale && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := r.b.Sites().Sites[0]; s.Stale || s.Problem != "" {
		t.Fatalf("after the next forecast: %+v", s)
	}
}

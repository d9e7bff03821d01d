package broker

import (
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

func req(id string, procs int, wall int64, price float64) forecast.JobRequest {
	return forecast.JobRequest{ID: id, Procs: procs, Walltime: wall, MaxPrice: price, User: "alice", Account: "proj1"}
}

func mustApply(t *testing.T, s *State, e Event) {
	t.Helper()
	if err := s.Apply(e); err != nil {
		t.Fatalf("apply %s: %v", e.Kind, err)
	}
}

func submitted(r forecast.JobRequest, now int64) Event {
	return Event{Kind: EvSubmitted, Time: now, Job: r.ID, Request: &r, RequestID: "req-" + r.ID, Actor: "alice"}
}

func twoSiteAlloc(job string) *forecast.Allocation {
	return &forecast.Allocation{Job: job, Start: 100, End: 3700, Cost: 10, Parts: []forecast.Part{
		{Site: "a", Node: "a1", Procs: 4}, {Site: "b", Node: "b1", Procs: 4}}}
}

func TestLifecycleReserveRunFinish(t *testing.T) {
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
	j := s.Job("g1")
	if j.State != wire.JobWaiting || j.WorstCost != 16 {
		t.Fatalf("after submit: state %s worst %v", j.State, j.WorstCost)
	}
	mustApply(t, s, Event{Kind: EvIntent, Time: 20, Job: "g1", Alloc: twoSiteAlloc("g1"), Revisions: map[string]uint64{"a": 3, "b": 5}})
	if j.State != wire.JobCommitting || len(s.Holds()) != 1 {
		t.Fatalf("after intent: %s holds %d", j.State, len(s.Holds()))
	}
	mustApply(t, s, Event{Kind: EvOutcome, Time: 21, Job: "g1", OK: true, Cost: 10,
		Reservations: []wire.Reservation{{ID: "r1", Job: "g1", Site: "a"}, {ID: "r2", Job: "g1", Site: "b"}}})
	if j.State != wire.JobReserved || j.Cost != 10 {
		t.Fatalf("after outcome: %s cost %v", j.State, j.Cost)
	}
	mustApply(t, s, Event{Kind: EvSite, Time: 100, Job: "g1", Site: "a", State: SiteStarted})
	if j.State != wire.JobRunning {
		t.Fatalf("after start: %s", j.State)
	}
	mustApply(t, s, Event{Kind: EvSite, Time: 3700, Job: "g1", Site: "a", State: SiteFinished})
	if j.State != wire.JobRunning {
		t.Fatalf("one of two sites finished: %s, want running", j.State)
	}
	mustApply(t, s, Event{Kind: EvSite, Time: 3700, Job: "g1", Site: "b", State: SiteFinished})
	if j.State != wire.JobFinished {
		t.Fatalf("both finished: %s", j.State)
	}
}

func TestRollbackOwesReleasesAndRequeues(t *testing.T) {
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
	mustApply(t, s, Event{Kind: EvIntent, Time: 20, Job: "g1", Alloc: twoSiteAlloc("g1")})
	mustApply(t, s, Event{Kind: EvOutcome, Time: 21, Job: "g1", Release: []string{"a"}, ReleaseAfter: 30, Message: "b refused"})
	j := s.Job("g1")
	if j.State != wire.JobWaiting || j.Alloc != nil || len(s.Holds()) != 0 {
		t.Fatalf("after rollback: %s alloc %v", j.State, j.Alloc)
	}
	if got := s.OwedReleases(29); len(got) != 0 {
		t.Fatalf("release owed before its time: %v", got)
	}
	if got := s.OwedReleases(30); len(got) != 1 || got[0] != (Owed{"g1", "a"}) {
		t.Fatalf("owed at 30: %v", got)
	}
	mustApply(t, s, Event{Kind: EvReleased, Time: 31, Job: "g1", Site: "a"})
	if got := s.OwedReleases(100); len(got) != 0 {
		t.Fatalf("still owed after release: %v", got)
	}
	if err := s.Apply(Event{Kind: EvReleased, Time: 32, Job: "g1", Site: "a"}); err == nil {
		t.Fatal("second release of the same site accepted")
	}
}

func TestApplyRefusesEventsOutOfOrder(t *testing.T) {
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
	bad := []Event{
		{Kind: EvOutcome, Job: "g1", OK: true},
		{Kind: EvSite, Job: "g1", Site: "a", State: SiteStarted},
		{Kind: EvExpired, Job: "g1"},
		{Kind: EvIntent, Job: "g1"},
		{Kind: EvIntent, Job: "nope", Alloc: twoSiteAlloc("nope")},
		{Kind: "bogus", Job: "g1"},
		submitted(req("g1", 1, 1, 1), 11),
	}
	for _, e := range bad {
		if err := s.Apply(e); err == nil {
			t.Errorf("%s on a waiting job accepted", e.Kind)
		}
	}
	if j := s.Job("g1"); j.State != wire.JobWaiting {
		t.Fatalf("refused events changed the state to %s", j.State)
	}
}

func TestReplayRebuildsTheSameState(t *testing.T) {
	events := []Event{
		submitted(req("g1", 8, 3600, 2), 10),
		submitted(req("g2", 4, 600, 3), 11),
		{Kind: EvIntent, Time: 20, Job: "g1", Alloc: twoSiteAlloc("g1")},
		{Kind: EvOutcome, Time: 21, Job: "g1", OK: true, Cost: 7, Reservations: []wire.Reservation{{ID: "r1", Job: "g1", Site: "a", End: 3700}}},
		{Kind: EvCancelled, Time: 22, Job: "g2", Actor: "alice"},
	}
	a, b := NewState(), NewState()
	for _, e := range events {
		mustApply(t, a, e)
		mustApply(t, b, e)
	}
	for _, id := range []string{"g1", "g2"} {
		x, y := a.Job(id).Status(nil), b.Job(id).Status(nil)
		if x.State != y.State || x.Cost != y.Cost {
			t.Fatalf("%s differs after replay: %+v vs %+v", id, x, y)
		}
	}
	if a.NextID() != "g3" {
		t.Fatalf("next id %s, want g3", a.NextID())
	}
	if b.ByRequest("req-g2").Req.ID != "g2" {
		t.Fatal("request id not remembered")
	}
}

// A job whose parts were submitted by hand ends with its sites' reports:
// what is left of its reservations (the slack, the rest of a job that
// ended early) is owed back to every site where it lasts; a failed part
// gives the job its message.
func TestHandSubmittedJobEndReleasesTheRest(t *testing.T) {
	for _, c := range []struct {
		last, msg, state string
	}{
		{SiteFinished, "", wire.JobFinished},
		{SiteFailed, "70.vm exited with status 3", wire.JobFailed},
	} {
		s := NewState()
		mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
		mustApply(t, s, Event{Kind: EvIntent, Job: "g1", Alloc: twoSiteAlloc("g1")})
		mustApply(t, s, Event{Kind: EvOutcome, Job: "g1", OK: true, Cost: 10, Reservations: []wire.Reservation{
			{ID: "la.g1.0", Job: "g1", Site: "a", Start: 100, End: 4000}, {ID: "g1.0", Job: "g1", Site: "b", Start: 100, End: 4000}}})
		for _, site := range []string{"a", "b"} {
			mustApply(t, s, Event{Kind: EvSite, Time: 110, Job: "g1", Site: site, State: SiteStarted})
		}
		mustApply(t, s, Event{Kind: EvSite, Time: 600, Job: "g1", Site: "a", State: SiteFinished})
		if j := s.Job("g1"); j.State != wire.JobRunning || len(j.PendingRelease) != 0 {
			t.Fatalf("one site done: %s, owed %v", j.State, j.PendingRelease)
		}
		mustApply(t, s, Event{Kind: EvSite, Time: 700, Job: "g1", Site: "b", State: c.last, Message: c.msg})
		j := s.Job("g1")
		if j.State != c.state || len(j.PendingRelease) != 2 || (c.msg != "" && j.Message != "b: "+c.msg) {
			t.Errorf("%s: state %s, message %q, owed %v", c.last, j.State, j.Message, j.PendingRelease)
		}
		if got := s.OwedReleases(700); len(got) != 2 {
			t.Errorf("%s: owed releases %v, want both sites", c.last, got)
		}
	}
}

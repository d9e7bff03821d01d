package web

import (
	"strings"
	"testing"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// TestWhyWaiting: a waiting job says why it holds nothing: the broker's
// why (status's) when there is one, else the planner's no-fit (with the
// stale sites), the refusal of its last commit, no cycle yet, or planned
// but not yet due.
func TestWhyWaiting(t *testing.T) {
	req := forecast.JobRequest{ID: "j", Procs: 4}
	cases := []struct {
		st    wire.JobStatus
		stale []string
		want  []string
	}{
		{wire.JobStatus{Job: req, State: wire.JobWaiting, Plan: &forecast.Allocation{Job: "j", Error: "no-fit: not enough processors"}},
			[]string{"beta"}, []string{"no-fit: not enough processors", "stale sites out of planning: [beta]"}},
		{wire.JobStatus{Job: req, State: wire.JobWaiting, Message: "over budget: account proj1 has 3 credits left"},
			nil, []string{"over budget"}},
		{wire.JobStatus{Job: req, State: wire.JobWaiting}, nil, []string{"not planned yet"}},
		{wire.JobStatus{Job: req, State: wire.JobWaiting, Message: "commit failed: alpha: stale",
			Plan: &forecast.Allocation{Job: "j", Start: 4600, End: 5000, Parts: []forecast.Part{{Site: "a", Node: "n", Procs: 4}}}},
			nil, []string{"planned to start in 1h:", "last attempt: commit failed: alpha: stale"}},
		{wire.JobStatus{Job: req, State: wire.JobWaiting, Plan: &forecast.Allocation{Job: "j", Error: "no-fit: not enough processors",
			Why: "at max_price 1 at most 0 of its 4 processors are free together; what would help: max_price 2 would fit"}},
			nil, []string{"at max_price 1 at most 0 of its 4 processors", "what would help: max_price 2 would fit"}},
		{wire.JobStatus{Job: req, State: wire.JobWaiting, Message: "commit failed: alpha: stale",
			Plan: &forecast.Allocation{Job: "j", Start: 4600, End: 5000, Parts: []forecast.Part{{Site: "a", Node: "n", Procs: 4}}, Why: "cannot start now: only 2 of its 4"}},
			nil, []string{"cannot start now: only 2 of its 4", "last attempt: commit failed: alpha: stale"}},
	}
	for i, c := range cases {
		v := ViewJob(c.st, c.stale, 1000)
		for _, w := range c.want {
			if !strings.Contains(v.Why, w) {
				t.Errorf("case %d: why %q lacks %q", i, v.Why, w)
			}
		}
	}
	placed := ViewJob(wire.JobStatus{Job: req, State: wire.JobReserved, Cost: 3,
		Plan: &forecast.Allocation{Job: "j", Start: 10, End: 20, Parts: []forecast.Part{{Site: "b", Node: "n", Procs: 2}, {Site: "a", Node: "m", Procs: 2}}}}, nil, 0)
	if placed.Why != "" || !placed.Reserved || placed.Start != 10 || strings.Join(placed.Sites, ",") != "b,a" || placed.Cost != 3 {
		t.Errorf("reserved job %+v", placed)
	}
}

// TestViewSitesStates: fresh, stale, offline, excluded and silent (not
// answering requests), each with why.
func TestViewSitesStates(t *testing.T) {
	rep := wire.SitesReply{Now: 1000, TTL: 300, Sites: []wire.SiteStatus{
		{Site: "a", Generated: 990, Age: 5},
		{Site: "b", Generated: 500, Age: 500, Stale: true},
		{Site: "c", Stale: true, Excluded: true, Problem: "forecast refused: bad"},
		{Site: "d", Stale: true, Offline: true},
		{Site: "e", Stale: true, Excluded: true, Unanswered: "does not answer its requests: reserve g1: no responders", UnansweredSince: 95},
	}}
	held := []broker.Site{{Name: "a", Forecast: forecast.Forecast{Unmodelled: []string{"maui.cfg:3: FSPOLICY"}}}, {Name: "d", Offline: true}}
	got := ViewSites(rep, held)
	want := map[string]string{"a": "fresh", "b": "stale", "c": "excluded", "d": "offline", "e": "silent"}
	for _, v := range got {
		if v.State != want[v.Site] {
			t.Errorf("%s: %s, want %s", v.Site, v.State, want[v.Site])
		}
		if v.State != "fresh" && v.Reason == "" {
			t.Errorf("%s: no reason", v.Site)
		}
	}
	if got[4].Reason != "does not answer its requests: reserve g1: no responders (for 15m05s)" {
		t.Errorf("silent site's reason %q", got[4].Reason)
	}
	if got[0].ForecastAge != 10 || got[0].HeartbeatAge != 5 || got[2].Reason != "forecast refused: bad" ||
		len(got[0].Unmodelled) != 1 || got[1].Unmodelled == nil {
		t.Errorf("%+v", got)
	}
}

// TestViewAudit: the latest records per origin, newest first, and every
// repair record among them.
func TestViewAudit(t *testing.T) {
	var recs []wire.AuditRecord
	for i := range 30 {
		recs = append(recs, wire.AuditRecord{Time: int64(i), Origin: "alpha", Action: "reserve"})
	}
	recs = append(recs,
		wire.AuditRecord{Time: 40, Origin: "broker", Action: "audit", Message: "2 sites, 3 reservations checked, 1 findings, repair=true"},
		wire.AuditRecord{Time: 41, Origin: "broker", Action: "audit", Message: "2 sites, 3 reservations checked, 0 findings, repair=false"},
		wire.AuditRecord{Time: 42, Origin: "broker", Action: "reserve", Message: "audit repair: ok"})
	v := ViewAudit(recs, 20)
	if a := v.Origins["alpha"]; len(a) != 20 || a[0].Time != 29 || a[19].Time != 10 {
		t.Errorf("alpha: %d records, newest %d", len(a), a[0].Time)
	}
	if len(v.Repairs) != 2 || v.Repairs[0].Time != 42 || v.Repairs[1].Time != 40 || v.Read != 33 {
		t.Errorf("repairs %+v", v.Repairs)
	}
}

// TestViewJobStart: a waiting or committing job's start is its plan's, a
// reserved one's its reservations', a job that started (a finished one
// too) when its sites said so; never "planned" once it holds or held
// reservations.
func TestViewJobStart(t *testing.T) {
	alloc := &forecast.Allocation{Job: "j", Start: 500, End: 900, Parts: []forecast.Part{{Site: "a", Node: "n", Procs: 4}}}
	req := forecast.JobRequest{ID: "j", Procs: 4}
	for _, c := range []struct {
		st    wire.JobStatus
		start int64
		kind  string
	}{
		{wire.JobStatus{Job: req, State: wire.JobWaiting, Plan: alloc}, 500, "planned"},
		{wire.JobStatus{Job: req, State: wire.JobCommitting, Plan: alloc}, 500, "planned"},
		{wire.JobStatus{Job: req, State: wire.JobReserved, Plan: alloc}, 500, "reserved"},
		{wire.JobStatus{Job: req, State: wire.JobRunning, Plan: alloc, Started: 530}, 530, "started"},
		{wire.JobStatus{Job: req, State: wire.JobFinished, Plan: alloc, Started: 530}, 530, "started"},
		{wire.JobStatus{Job: req, State: wire.JobExpired, Plan: alloc}, 500, "reserved"},
		{wire.JobStatus{Job: req, State: wire.JobCancelled}, 0, ""},
	} {
		if v := ViewJob(c.st, nil, 400); v.Start != c.start || v.StartKind != c.kind {
			t.Errorf("%s: start %d (%s), want %d (%s)", c.st.State, v.Start, v.StartKind, c.start, c.kind)
		}
	}
}

// TestAuditTone: ok and a finished job are good; a failure of the
// machinery, a failed part or a body that disagrees with its subject is
// bad; a refusal (an answer) is a note.
func TestAuditTone(t *testing.T) {
	for _, c := range []struct {
		r    wire.AuditRecord
		want string
	}{
		{wire.AuditRecord{Action: "commit", Code: wire.CodeOK}, ToneGood},
		{wire.AuditRecord{Action: "conclude", Code: wire.JobFinished}, ToneGood},
		{wire.AuditRecord{Action: "conclude", Code: wire.JobFailed}, ToneBad},
		{wire.AuditRecord{Action: "rollback", Code: wire.CodeInternal}, ToneBad},
		{wire.AuditRecord{Action: "reserve", Code: wire.CodeSchedulerEr}, ToneBad},
		{wire.AuditRecord{Action: "reserve", Code: wire.CodeOK, Mismatch: "site b said"}, ToneBad},
		{wire.AuditRecord{Action: "reserve", Code: wire.CodeStale}, ToneNote},
		{wire.AuditRecord{Action: "reserve", Code: wire.CodeNoCapacity}, ToneNote},
		{wire.AuditRecord{Action: "conclude", Code: wire.JobCancelled}, ToneNote},
	} {
		r, want := c.r, c.want
		if got := AuditTone(r); got != want {
			t.Errorf("%s %s (mismatch %q): %s, want %s", r.Action, r.Code, r.Mismatch, got, want)
		}
	}
}

// TestJobFilter: by state ("active": not ended), by a part of the id,
// user or account, case ignored.
func TestJobFilter(t *testing.T) {
	jobs := []*broker.Job{
		{Req: forecast.JobRequest{ID: "g1", User: "alice", Account: "proj1"}, State: wire.JobWaiting},
		{Req: forecast.JobRequest{ID: "g2", User: "bob", Account: "proj2"}, State: wire.JobFinished},
		{Req: forecast.JobRequest{ID: "g3", User: "alice", Account: "Phys"}, State: wire.JobRunning},
	}
	for _, c := range []struct{ states, match, want string }{
		{"", "", "g1,g2,g3"}, {"active", "", "g1,g3"}, {"finished,running", "", "g2,g3"},
		{"", "ALICE", "g1,g3"}, {"", "phys", "g3"}, {"active", "bob", ""}, {"", "g2", "g2"},
	} {
		keep := jobFilter(c.states, c.match)
		var got []string
		for _, j := range jobs {
			if keep(j, nil) {
				got = append(got, j.Req.ID)
			}
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("state %q match %q: %v, want %s", c.states, c.match, got, c.want)
		}
	}
}

// TestOnSite: a Gantt's holds come from the jobs not ended with a
// reservation, an allocation or a plan on the site.
func TestOnSite(t *testing.T) {
	on := func(site string) *forecast.Allocation {
		return &forecast.Allocation{Parts: []forecast.Part{{Site: site, Node: "n", Procs: 1}}}
	}
	keep := onSite("a")
	for i, c := range []struct {
		j    *broker.Job
		plan *forecast.Allocation
		want bool
	}{
		{&broker.Job{State: wire.JobWaiting}, on("a"), true},
		{&broker.Job{State: wire.JobWaiting}, on("b"), false},
		{&broker.Job{State: wire.JobWaiting}, nil, false},
		{&broker.Job{State: wire.JobCommitting, Alloc: on("a")}, nil, true},
		{&broker.Job{State: wire.JobReserved, Alloc: on("b"), Reservations: []wire.Reservation{{Site: "a"}}}, nil, true},
		{&broker.Job{State: wire.JobRunning, Alloc: on("b"), Reservations: []wire.Reservation{{Site: "b"}}}, nil, false},
		{&broker.Job{State: wire.JobFinished, Alloc: on("a"), Reservations: []wire.Reservation{{Site: "a"}}}, nil, false},
	} {
		if got := keep(c.j, c.plan); got != c.want {
			t.Errorf("case %d (%s): %v, want %v", i, c.j.State, got, c.want)
		}
	}
}

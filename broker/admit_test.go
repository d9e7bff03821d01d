package broker

import (
	"strings"
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

func submitReq(id string, r forecast.JobRequest) wire.SubmitRequest {
	return wire.SubmitRequest{Type: wire.TypeSubmit, RequestID: id, Job: r}
}

func TestAdmitAssignsIDAndDeduplicates(t *testing.T) {
	s := NewState()
	r := req("", 8, 3600, 1)
	e, rep := Admit(s, Policy{}, "alice", submitReq("k1", r), 1000)
	if rep.Code != wire.CodeOK || rep.Job != "g1" || e.Kind != EvSubmitted || e.Request.Submitted != 1000 {
		t.Fatalf("first submit: %+v %+v", rep, e)
	}
	mustApply(t, s, e)
	e2, rep2 := Admit(s, Policy{}, "alice", submitReq("k1", r), 1005)
	if e2.Kind != "" || !rep2.Duplicate || rep2.Job != "g1" {
		t.Fatalf("retry: event %q reply %+v", e2.Kind, rep2)
	}
	e3, rep3 := Admit(s, Policy{}, "alice", submitReq("k2", r), 1006)
	if rep3.Job != "g2" || e3.Kind != EvSubmitted {
		t.Fatalf("second job: %+v", rep3)
	}
}

func TestAdmitRefusals(t *testing.T) {
	p := Policy{
		MaxWalltime: 86400,
		Budgets:     Budgets{Accounts: map[string]float64{"proj1": 100}},
		Identities: map[string]Allowed{
			"alice-cli": {Users: []string{"alice"}, Accounts: []string{"proj1"}},
			"ops":       {Users: []string{"*"}, Accounts: []string{"*"}},
		},
	}
	cases := []struct {
		name, actor string
		job         forecast.JobRequest
		code, want  string
	}{
		{"ok", "alice-cli", req("", 10, 3600, 1), wire.CodeOK, ""},
		{"zero procs", "alice-cli", req("", 0, 3600, 1), wire.CodeInvalid, "procs"},
		{"zero walltime", "alice-cli", req("", 1, 0, 1), wire.CodeInvalid, "walltime"},
		{"negative price", "alice-cli", req("", 1, 60, -1), wire.CodeInvalid, "max_price"},
		{"too long", "alice-cli", req("", 1, 90000, 1), wire.CodeTooLong, "walltime 25h exceeds the broker's maximum 24h"},
		{"unknown actor", "mallory", req("", 1, 60, 1), wire.CodeForbidden, "mallory"},
		{"other user", "alice-cli", withUser(req("", 1, 60, 1), "bob"), wire.CodeForbidden, "bob"},
		{"bad user name", "ops", withUser(req("", 1, 60, 1), "bob;rm -rf /"), wire.CodeInvalid, "plain name"},
		{"over budget", "alice-cli", req("", 100, 3600, 2), wire.CodeOverBudget, "account proj1: budget 100.00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, rep := Admit(NewState(), p, c.actor, submitReq("k", c.job), 1)
			if rep.Code != c.code || !strings.Contains(rep.Message, c.want) {
				t.Fatalf("got %s %q, want %s containing %q", rep.Code, rep.Message, c.code, c.want)
			}
		})
	}
}

func withUser(r forecast.JobRequest, u string) forecast.JobRequest { r.User = u; return r }

func TestBudgetHoldsWorstCaseChargesRealRefundsCancel(t *testing.T) {
	p := Policy{Budgets: Budgets{Accounts: map[string]float64{"proj1": 100}}}
	s := NewState()
	// worst case 8 procs × 1 h × 10 = 80 credits
	e, rep := Admit(s, p, "alice", submitReq("k1", req("", 8, 3600, 10)), 1)
	if rep.Code != wire.CodeOK {
		t.Fatal(rep.Message)
	}
	mustApply(t, s, e)
	if _, rep := Admit(s, p, "alice", submitReq("k2", req("", 1, 3600, 30)), 2); rep.Code != wire.CodeOverBudget {
		t.Fatalf("second job fits although 80 of 100 are held: %+v", rep)
	}
	// Durations in one format (issue 38: the walltime showed as 360000s).
	if _, rep := Admit(s, p, "alice", submitReq("k9", req("", 1, 360000, 1)), 2); !strings.Contains(rep.Message, "× 1 procs × 100h)") {
		t.Fatalf("over budget: %q, want the walltime as 100h", rep.Message)
	}
	j := s.Job("g1")
	if msg := s.CheckCommit(p.Budgets, j, 20); msg != "" {
		t.Fatalf("commit at real cost 20 refused: %s", msg)
	}
	mustApply(t, s, Event{Kind: EvIntent, Job: "g1", Alloc: twoSiteAlloc("g1")})
	mustApply(t, s, Event{Kind: EvOutcome, Job: "g1", OK: true, Cost: 20})
	if used := s.Used("proj1", false); used != 20 {
		t.Fatalf("used after reserve %v, want the real cost 20", used)
	}
	if _, rep := Admit(s, p, "alice", submitReq("k2", req("", 1, 3600, 30)), 3); rep.Code != wire.CodeOK {
		t.Fatalf("job of 30 refused with 80 left: %+v", rep)
	}
	ce, crep := DecideCancel(s, p, "alice", "g1", 4)
	if crep.Code != wire.CodeOK || len(ce.Release) != 2 {
		t.Fatalf("cancel: %+v %+v", crep, ce)
	}
	mustApply(t, s, ce)
	if used := s.Used("proj1", false); used != 0 {
		t.Fatalf("used after cancel %v, want 0 (refunded)", used)
	}
}

func TestCancelRefusals(t *testing.T) {
	p := Policy{Identities: map[string]Allowed{"alice": {Users: []string{"alice"}}, "bob": {Users: []string{"bob"}}}}
	s := NewState()
	mustApply(t, s, submitted(req("g1", 1, 60, 1), 1))
	if _, rep := DecideCancel(s, p, "bob", "g1", 2); rep.Code != wire.CodeForbidden {
		t.Fatalf("bob cancelled alice's job: %+v", rep)
	}
	if _, rep := DecideCancel(s, p, "alice", "g9", 2); rep.Code != wire.CodeNotFound {
		t.Fatalf("unknown job: %+v", rep)
	}
	mustApply(t, s, Event{Kind: EvIntent, Job: "g1", Alloc: twoSiteAlloc("g1")})
	if _, rep := DecideCancel(s, p, "alice", "g1", 2); rep.Code != wire.CodeInvalid {
		t.Fatalf("cancel during commit: %+v", rep)
	}
}

func TestDefaultBudgetAndWildcardIdentity(t *testing.T) {
	zero := 0.0
	p := Policy{
		Budgets:    Budgets{Users: map[string]float64{"alice": 1000}, Accounts: map[string]float64{"proj1": 1000}, Default: &zero},
		Identities: map[string]Allowed{"*": {Users: []string{"*"}, Accounts: []string{"*"}}},
	}
	if _, rep := Admit(NewState(), p, "", submitReq("k", req("", 1, 60, 1)), 1); rep.Code != wire.CodeOK {
		t.Fatalf("listed user and account: %+v", rep)
	}
	other := req("", 1, 60, 1)
	other.Account = "proj2"
	if _, rep := Admit(NewState(), p, "anyone", submitReq("k", other), 1); rep.Code != wire.CodeOverBudget || !strings.Contains(rep.Message, "account proj2: budget 0.00") {
		t.Fatalf("unlisted account with default 0: %+v", rep)
	}
}

// The cancel message names who cancelled; on a NATS server without
// authentication that is the anonymous user, not an empty name.
func TestCancelMessageNamesTheActor(t *testing.T) {
	p := Policy{Identities: map[string]Allowed{"*": {Users: []string{"*"}, Accounts: []string{"*"}}}}
	for actor, want := range map[string]string{"alice": "cancelled by alice", "": "cancelled by the anonymous NATS user"} {
		s := NewState()
		mustApply(t, s, submitted(req("g1", 1, 60, 1), 1))
		e, rep := DecideCancel(s, p, actor, "g1", 2)
		if rep.Code != wire.CodeOK || e.Message != want {
			t.Errorf("actor %q: %+v, message %q, want %q", actor, rep, e.Message, want)
		}
	}
}

// Status lists the sites that still owe a release, sorted.
func TestStatusListsOwedReleases(t *testing.T) {
	j := &Job{Req: req("g1", 1, 60, 1), State: wire.JobCancelled, PendingRelease: map[string]int64{"b": 5, "a": 9}}
	if got := j.Status(nil).Releasing; len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("releasing %q, want [a b]", got)
	}
}

// A job the known sites could never hold is refused with their size: one
// site's for a one-site job, the max_sites largest together, or the whole
// grid's; with no site known yet nothing is refused.
func TestAdmitRefusesWhatNoKnownSiteCouldHold(t *testing.T) {
	sites := []Site{
		{Name: "alpha", Forecast: forecast.Forecast{Site: "alpha", Nodes: []forecast.Node{{Name: "a1", Procs: 64}, {Name: "a2", Procs: 64}}}},
		{Name: "beta", Forecast: forecast.Forecast{Site: "beta", Nodes: []forecast.Node{{Name: "b1", Procs: 100}}}},
		{Name: "gamma", Forecast: forecast.Forecast{Site: "gamma", Nodes: []forecast.Node{{Name: "c1", Procs: 240}}}},
		{Name: "delta"}, // its only forecast was refused: no size known
	}
	p := Policy{Grid: CapacityOf(sites)}
	one := func(procs, maxSites int) forecast.JobRequest {
		r := req("", procs, 3600, 1)
		r.MaxSites = maxSites
		return r
	}
	cases := []struct {
		name string
		job  forecast.JobRequest
		code string
		want string
	}{
		{"fits the largest site", one(240, 1), wire.CodeOK, ""},
		{"over the largest site", one(241, 1), wire.CodeNoCapacity, "the largest site known (gamma) has 240"},
		{"fits two sites", one(368, 2), wire.CodeOK, ""},
		{"over the two largest", one(369, 2), wire.CodeNoCapacity, "the 2 largest sites known (gamma, alpha) have 368 together"},
		{"fits the grid", one(468, 0), wire.CodeOK, ""},
		{"over the grid", one(469, 0), wire.CodeNoCapacity, "the whole grid known (3 sites: gamma, alpha, beta) has 468"},
		{"a million procs", one(1_000_000, 0), wire.CodeNoCapacity, "1000000 processors asked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, rep := Admit(NewState(), p, "alice", submitReq("k", c.job), 1)
			if rep.Code != c.code || !strings.Contains(rep.Message, c.want) {
				t.Fatalf("reply %+v, want %s containing %q", rep, c.code, c.want)
			}
		})
	}
	if _, rep := Admit(NewState(), Policy{Grid: CapacityOf(nil)}, "alice", submitReq("k", one(1_000_000, 0)), 1); rep.Code != wire.CodeOK {
		t.Fatalf("refused with no site known: %+v", rep)
	}
}

// A job whose walltime no known site's forecast horizon can hold, even
// on its fastest nodes, is refused at submit naming the horizon (it would
// wait for ever, unplaced); one that fits on the fastest site's is taken.
func TestAdmitRefusesWalltimeBeyondEveryHorizon(t *testing.T) {
	site := func(name string, speed float64) Site {
		return Site{Name: name, Forecast: forecast.Forecast{Site: name, Generated: 1000, Horizon: 1000 + 48*3600,
			Nodes: []forecast.Node{{Name: "n", Procs: 64, Speed: speed}, {Name: "m", Procs: 64, Speed: 1}}}}
	}
	p := Policy{Grid: CapacityOf([]Site{site("alpha", 1), site("beta", 1.5)})}
	long := func(walltime int64) forecast.JobRequest { return req("", 8, walltime, 1) }
	if _, rep := Admit(NewState(), p, "alice", submitReq("a", long(72*3600)), 1); rep.Code != wire.CodeOK {
		t.Fatalf("72 h on beta's 1.5-speed nodes fits its 48 h horizon: %+v", rep)
	}
	_, rep := Admit(NewState(), p, "alice", submitReq("b", long(72*3600+1)), 1)
	if rep.Code != wire.CodeTooLong || !strings.Contains(rep.Message, "at most 72h, on beta (forecast horizon 48h, fastest node speed 1.5)") {
		t.Fatalf("reply %+v, want too-long naming beta's horizon", rep)
	}
	// 100 processors for 60 h: only beta's 64 fast ones hold 60 h
	wide := req("", 100, 60*3600, 1)
	_, rep = Admit(NewState(), p, "alice", submitReq("c", wide), 1)
	if rep.Code != wire.CodeTooLong || !strings.Contains(rep.Message, "100 processors for 60h: no set of the sites known can hold that") {
		t.Fatalf("reply %+v, want too-long: no set of sites holds 100 processors for 60 h", rep)
	}
	wide.Walltime = 48 * 3600 // every node holds 48 h: 256 processors
	if _, rep := Admit(NewState(), p, "alice", submitReq("d", wide), 1); rep.Code != wire.CodeOK {
		t.Fatalf("100 processors for 48 h fit on alpha and beta: %+v", rep)
	}
}

// request_id is bounded like the other names, refused as invalid without
// being echoed.
func TestAdmitBoundsRequestID(t *testing.T) {
	for _, id := range []string{strings.Repeat("k", 900<<10), "k1\nNats-Msg-Id: x", "k 1"} {
		_, rep := Admit(NewState(), Policy{}, "alice", submitReq(id, req("", 1, 60, 1)), 1)
		if rep.Code != wire.CodeInvalid || !strings.Contains(rep.Message, "request_id") || len(rep.Message) > 200 {
			t.Fatalf("request_id of %d bytes: %s %.200q", len(id), rep.Code, rep.Message)
		}
	}
	if _, rep := Admit(NewState(), Policy{}, "alice", submitReq(strings.Repeat("k", 64), req("", 1, 60, 1)), 1); rep.Code != wire.CodeOK {
		t.Fatalf("a 64-byte request_id: %+v", rep)
	}
}

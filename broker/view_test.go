package broker

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

// Issue 15.8: refusals never echo huge input; control characters in the
// actor and over-long names are refused.
func TestAdmitRefusesHostileNamesWithoutEchoing(t *testing.T) {
	huge := strings.Repeat("A", 900_000)
	cases := map[string]struct {
		actor string
		job   forecast.JobRequest
	}{
		"huge user":        {"alice", withUser(req("", 1, 60, 1), huge)},
		"huge account":     {"alice", func() forecast.JobRequest { r := req("", 1, 60, 1); r.Account = huge; return r }()},
		"huge id":          {"alice", req(huge, 1, 60, 1)},
		"huge feature":     {"alice", func() forecast.JobRequest { r := req("", 1, 60, 1); r.Features = []string{huge}; return r }()},
		"many features":    {"alice", func() forecast.JobRequest { r := req("", 1, 60, 1); r.Features = make([]string, 10000); return r }()},
		"huge actor":       {huge, req("", 1, 60, 1)},
		"control in actor": {"ali\x1b[2Jce", req("", 1, 60, 1)},
		"newline in actor": {"alice\nforged log line", req("", 1, 60, 1)},
		"bad utf-8 actor":  {"ali\xffce", req("", 1, 60, 1)},
	}
	for name, c := range cases {
		_, rep := Admit(NewState(), Policy{}, c.actor, submitReq("k", c.job), 1)
		if rep.Code != wire.CodeInvalid {
			t.Errorf("%s: code %s, want invalid", name, rep.Code)
		}
		if len(rep.Message) > 300 {
			t.Errorf("%s: refusal of %d bytes echoes the input", name, len(rep.Message))
		}
	}
}

// Issue 12.12: a max_price whose worst case overflows is refused at
// admission; one stored by an older broker is cancelled on replay and
// breaks no status reply.
func TestNonFiniteWorstCost(t *testing.T) {
	_, rep := Admit(NewState(), Policy{}, "alice", submitReq("k", req("", 8, 36000, 1e308)), 1)
	if rep.Code != wire.CodeInvalid || !strings.Contains(rep.Message, "max_price") {
		t.Fatalf("1e308: %+v", rep)
	}
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 36000, 1e308), 1))
	mustApply(t, s, submitted(req("g2", 8, 3600, 1), 2))
	if j := s.Job("g1"); j.State != wire.JobCancelled || j.WorstCost != 0 {
		t.Fatalf("replayed 1e308 job: %s worst %v", j.State, j.WorstCost)
	}
	if used := s.Used("alice", true); math.IsInf(used, 0) || used != 8 {
		t.Fatalf("alice's budget use %v", used)
	}
	reply := s.Status(Policy{}, Viewer{All: true}, wire.StatusRequest{All: true}, nil, Page{}, 3)
	if _, err := json.Marshal(reply); err != nil || len(reply.Jobs) != 2 {
		t.Fatalf("status with the replayed job: %d jobs, %v", len(reply.Jobs), err)
	}
}

// A job record holding +Inf (however it got there) is shown with zeros
// and a note; the others are untouched.
func TestStatusSurvivesANonFiniteRecord(t *testing.T) {
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 3600, 1), 1))
	mustApply(t, s, submitted(req("g2", 8, 3600, 1), 2))
	s.Job("g1").Cost = math.Inf(1)
	reply := s.Status(Policy{}, Viewer{All: true}, wire.StatusRequest{}, nil, Page{}, 3)
	data, err := json.Marshal(reply)
	if err != nil {
		t.Fatalf("status does not encode: %v", err)
	}
	if !strings.Contains(reply.Jobs[0].Message, "not finite") || reply.Jobs[1].WorstCost != 8 || len(data) == 0 {
		t.Fatalf("jobs %+v", reply.Jobs)
	}
}

// Issue 15.6: status comes in pages that fit in a NATS message, and the
// pages together list every job once.
func TestStatusPages(t *testing.T) {
	s := NewState()
	for i := 1; i <= 2500; i++ {
		mustApply(t, s, submitted(req(fmt.Sprintf("g%d", i), 8, 3600, 1), int64(i)))
	}
	seen := map[string]bool{}
	after, pages := uint64(0), 0
	for {
		reply := s.Status(Policy{}, Viewer{All: true}, wire.StatusRequest{After: after}, nil, Page{Bytes: 100_000}, 1)
		data, _ := json.Marshal(reply)
		if len(data) > 110_000 {
			t.Fatalf("page of %d bytes over the bound", len(data))
		}
		for _, j := range reply.Jobs {
			if seen[j.Job.ID] {
				t.Fatalf("%s listed twice", j.Job.ID)
			}
			seen[j.Job.ID] = true
		}
		pages++
		if reply.Next == 0 {
			break
		}
		after = reply.Next
	}
	if len(seen) != 2500 || pages < 5 {
		t.Fatalf("%d jobs in %d pages", len(seen), pages)
	}
	if r := s.Status(Policy{}, Viewer{All: true}, wire.StatusRequest{Limit: 7}, nil, Page{}, 1); len(r.Jobs) != 7 || r.Next == 0 {
		t.Fatalf("limit 7: %d jobs next %d", len(r.Jobs), r.Next)
	}
}

// Issue 15.8: grid users see their own jobs (and those of users they may
// act for); operators see all.
func TestStatusShowsOnlyOwnJobs(t *testing.T) {
	p := Policy{
		Identities: map[string]Allowed{"alice": {Users: []string{"alice"}}, "bob": {Users: []string{"bob"}},
			"portal": {Users: []string{"*"}}},
		Operators: []string{"operator"},
	}
	s := NewState()
	a := submitted(req("g1", 1, 60, 1), 1)
	b := submitted(withUser(req("g2", 1, 60, 1), "bob"), 2)
	b.Actor = "bob"
	mustApply(t, s, a)
	mustApply(t, s, b)
	ids := func(actor string, job string) []string {
		var out []string
		for _, j := range s.Status(p, ViewerFor(p, actor), wire.StatusRequest{Job: job}, nil, Page{}, 3).Jobs {
			out = append(out, j.Job.ID)
		}
		return out
	}
	for actor, want := range map[string]string{"alice": "[g1]", "bob": "[g2]", "portal": "[g1 g2]", "operator": "[g1 g2]", "mallory": "[]"} {
		if got := fmt.Sprint(ids(actor, "")); got != want {
			t.Errorf("%s sees %s, want %s", actor, got, want)
		}
	}
	if r := s.Status(p, ViewerFor(p, "alice"), wire.StatusRequest{Job: "g2"}, nil, Page{}, 3); r.Code != wire.CodeNotFound {
		t.Errorf("alice asked for bob's job: %+v", r)
	}
	if open := ViewerFor(Policy{}, ""); !open.All {
		t.Error("a setup without identities hides jobs")
	}
}

func TestQueueLimits(t *testing.T) {
	p := Policy{MaxActivePerUser: 2, MaxActivePerAccount: 3}
	s := NewState()
	for i := 1; i <= 2; i++ {
		mustApply(t, s, submitted(req(fmt.Sprintf("g%d", i), 1, 60, 1), 1))
	}
	if _, rep := Admit(s, p, "alice", submitReq("k", req("", 1, 60, 1)), 2); rep.Code != wire.CodeQueueFull || !strings.Contains(rep.Message, "user alice has 2") {
		t.Fatalf("third job of alice: %+v", rep)
	}
	if _, rep := Admit(s, p, "bob", submitReq("k", withUser(req("", 1, 60, 1), "bob")), 2); rep.Code != wire.CodeOK {
		t.Fatalf("bob's first job: %+v", rep)
	}
	mustApply(t, s, Event{Kind: EvCancelled, Job: "g1", Time: 3})
	if _, rep := Admit(s, p, "alice", submitReq("k", req("", 1, 60, 1)), 4); rep.Code != wire.CodeOK {
		t.Fatalf("alice after a cancel: %+v", rep)
	}
}

// Status shows the criterion a job is planned with: its own, else the
// broker's planning.criterion (Policy.Criterion), else the format's
// default — not the format's default when the broker sets another.
func TestStatusShowsThePlannedCriterion(t *testing.T) {
	s := NewState()
	own := req("own", 1, 60, 1)
	own.Criterion = forecast.EarliestStart
	mustApply(t, s, submitted(own, 1))
	mustApply(t, s, submitted(req("none", 1, 60, 1), 2))
	for _, c := range []struct{ def, own, none string }{
		{forecast.EarliestFinish, forecast.EarliestStart, forecast.EarliestFinish},
		{"", forecast.EarliestStart, forecast.DefaultCriterion},
	} {
		reply := s.Status(Policy{Criterion: c.def}, Viewer{All: true}, wire.StatusRequest{All: true}, nil, Page{}, 3)
		got := map[string]string{}
		for _, j := range reply.Jobs {
			got[j.Job.ID] = j.Criterion
		}
		if got["own"] != c.own || got["none"] != c.none {
			t.Errorf("broker default %q: criteria %v, want own %s, none %s", c.def, got, c.own, c.none)
		}
	}
}

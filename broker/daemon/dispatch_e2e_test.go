package daemon

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/wire"
)

func gridUsers(name string) (agent.LocalUser, error) {
	if name == "alice" {
		return agent.LocalUser{Name: "alice", UID: 1001, Home: "/home/alice"}, nil
	}
	return agent.LocalUser{}, errors.New("no such user")
}

// startDispatchAgent is startAgent for a site that runs dispatched parts
// (the simulated site executes them; a part starts 5 s after its
// reservation, as under Maui's poll).
func (e *env) startDispatchAgent(name string, nodes int) *realSite {
	e.t.Helper()
	site, err := simsite.New(simsite.Config{Site: name, Nodes: nodes, PPN: 8, Speed: 1, MemMB: 1000, Policy: sim.EASY,
		Start: e.clock.Now().Unix(), Clock: e.clock.Now, StartDelay: 5 * time.Second})
	if err != nil {
		e.t.Fatal(err)
	}
	lg := zerolog.New(zerolog.NewTestWriter(e.t)).Level(zerolog.WarnLevel)
	a, err := agent.New(agent.Config{Site: name, Debounce: 20 * time.Millisecond, Refresh: 100 * time.Millisecond,
		ForecastTTL: time.Minute}, agent.Deps{Conn: connect(e.t, e.srv), Snapshotter: site, Reserver: site, Executor: site,
		Users: gridUsers, Now: e.clock.Now, Log: &lg,
		Engine: agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rs := &realSite{name: name, site: site, stop: cancel, done: make(chan error, 1)}
	go func() { rs.done <- a.Run(ctx) }()
	e.t.Cleanup(func() { rs.halt() })
	return rs
}

func submitScript(t *testing.T, b *Broker, reqID string, j forecast.JobRequest, script string) wire.SubmitReply {
	t.Helper()
	rep := b.Submit(context.Background(), "alice", wire.SubmitRequest{Type: wire.TypeSubmit, RequestID: reqID, Job: j, Script: []byte(script)})
	if rep.Code != wire.CodeOK {
		t.Fatalf("submit: %+v", rep)
	}
	return rep
}

// cycleUntil waits until the job is in state, running cycles meanwhile.
func cycleUntil(t *testing.T, b *Broker, id, state string) wire.JobStatus {
	t.Helper()
	return cycleUntilFn(t, b, id, state, func(st wire.JobStatus) bool { return st.State == state })
}

func cycleUntilFn(t *testing.T, b *Broker, id, what string, ok func(wire.JobStatus) bool) wire.JobStatus {
	t.Helper()
	var st wire.JobStatus
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := b.Cycle(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st = status(t, b, id); ok(st) {
			return st
		}
	}
	t.Fatalf("job %s is %s (%s), want %s; parts %+v", id, st.State, st.Message, what, st.Parts)
	return st
}

// toStart moves the clock to 10 s after the job's start and waits until
// the parts that will start did (the sites report on their own time).
func toStart(t *testing.T, e *env, b *Broker, st wire.JobStatus, started int) wire.JobStatus {
	t.Helper()
	e.clock.Add(time.Duration(st.Plan.Start-e.clock.Now().Unix()+10) * time.Second)
	return cycleUntilFn(t, b, st.Job.ID, "started parts", func(st wire.JobStatus) bool {
		n := 0
		for _, p := range st.Parts {
			if p.State == wire.PartStarted {
				n++
			}
		}
		return n == started
	})
}

// twoSiteDispatched submits a 48-processor job that needs both 32-processor
// sites, with script, and reserves and dispatches it.
func twoSiteDispatched(t *testing.T, script string) (*env, *Broker, *realSite, *realSite, wire.JobStatus) {
	e := newEnv(t)
	a, c := e.startDispatchAgent("alpha", 4), e.startDispatchAgent("beta", 4)
	r := e.startBroker(func(cfg *Config) { cfg.StartGrace = time.Minute })
	e.waitSites(r.b, 2)
	rep := submitScript(t, r.b, "k1", job(48, 3600, 2), script)
	st := cycleUntil(t, r.b, rep.Job, wire.JobDispatched)
	if len(st.Parts) != 2 || st.ScriptBytes != len(script) {
		t.Fatalf("dispatched: %+v", st)
	}
	for _, p := range st.Parts {
		if p.State != wire.PartDispatched || p.LocalID == "" || p.LocalUser != "alice" || !strings.HasSuffix(p.Output, ".out") {
			t.Fatalf("part %+v", p)
		}
	}
	return e, r.b, a, c, st
}

func partBySite(st wire.JobStatus, site string) wire.PartStatus {
	for _, p := range st.Parts {
		if p.Site == site {
			return p
		}
	}
	return wire.PartStatus{}
}

func TestDispatchedJobRunsToTheEnd(t *testing.T) {
	e, b, a, c, st := twoSiteDispatched(t, "#!/bin/sh\n#lookahead-sim runtime=1800\nmpirun ./model\n")
	start := st.Plan.Start
	st = toStart(t, e, b, st, 2)
	for _, p := range st.Parts {
		if p.State != wire.PartStarted || p.Start != start+5 {
			t.Fatalf("running part %+v, want a start 5 s after %d", p, start)
		}
	}
	e.clock.Add(1800 * time.Second)
	st = cycleUntil(t, b, st.Job.ID, wire.JobFinished)
	end := partBySite(st, "alpha").End
	if p := partBySite(st, "beta"); p.ExitStatus == nil || *p.ExitStatus != 0 || p.End != start+1805 {
		t.Fatalf("finished part %+v", p)
	}
	if want := st.Plan.Cost * float64(end-start) / float64(st.Plan.End-start); math.Abs(st.Cost-want) > st.Plan.Cost*0.01 {
		t.Fatalf("charged %v, want about %v (the half of the reservation held)", st.Cost, want)
	}
	waitReleased(t, b, a, c)
}

func waitReleased(t *testing.T, b *Broker, sites ...*realSite) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b.Cycle(context.Background())
		held := 0
		for _, s := range sites {
			held += len(s.held(t))
		}
		if held == 0 {
			return
		}
	}
	t.Fatal("reservations not released")
}

func TestFailingPartDeletesTheOtherAndReleases(t *testing.T) {
	e, b, a, c, st := twoSiteDispatched(t, "#lookahead-sim runtime=3000\n#lookahead-sim site=beta runtime=600 exit=3\n")
	st = toStart(t, e, b, st, 2)
	e.clock.Add(690 * time.Second)
	st = cycleUntil(t, b, st.Job.ID, wire.JobFailed)
	if !strings.Contains(st.Message, "exit status 3") || partBySite(st, "alpha").State != wire.PartDeleted {
		t.Fatalf("failed job: %s %+v", st.Message, st.Parts)
	}
	if st.Cost <= 0 || st.Cost >= st.Plan.Cost/4 {
		t.Fatalf("charged %v of %v for 700 s of 3600", st.Cost, st.Plan.Cost)
	}
	waitReleased(t, b, a, c)
	jobs, _, _ := a.site.Jobs(context.Background())
	if len(jobs) != 1 || !jobs[0].Done() || jobs[0].ExitStatus == nil || *jobs[0].ExitStatus != 271 {
		t.Fatalf("alpha's part was not deleted: %+v", jobs)
	}
	var stop, qdel bool
	for _, r := range auditAll(t, e) {
		stop = stop || (r.Action == "stop" && r.Site == "alpha" && r.Code == wire.CodeOK)
		qdel = qdel || (r.Action == "qdel" && r.Origin == "alpha" && len(r.Command) == 2 && r.Command[0] == "qdel")
	}
	if !stop || !qdel {
		t.Fatalf("audit: stop %v qdel %v", stop, qdel)
	}
}

func TestPartThatNeverStartsFailsTheJobWithARefund(t *testing.T) {
	e, b, a, c, st := twoSiteDispatched(t, "#lookahead-sim site=beta hold\n")
	if st = toStart(t, e, b, st, 1); st.State != wire.JobDispatched || partBySite(st, "alpha").State != wire.PartStarted {
		t.Fatalf("within the grace period: %s %+v", st.State, st.Parts)
	}
	e.clock.Add(51 * time.Second)
	st = cycleUntil(t, b, st.Job.ID, wire.JobFailed)
	if st.Cost != 0 || !strings.Contains(st.Message, "did not start within 1m") {
		t.Fatalf("late part: cost %v, %s", st.Cost, st.Message)
	}
	waitReleased(t, b, a, c)
	for _, s := range []*realSite{a, c} {
		jobs, _, _ := s.site.Jobs(context.Background())
		if len(jobs) != 1 || !jobs[0].Done() {
			t.Fatalf("%s's part not deleted: %+v", s.name, jobs)
		}
	}
}

func TestCancelRunningDispatchedJob(t *testing.T) {
	e, b, a, c, st := twoSiteDispatched(t, "#lookahead-sim runtime=3000\n")
	toStart(t, e, b, st, 2)
	e.clock.Add(590 * time.Second)
	reply := b.Cancel(context.Background(), "alice", st.Job.ID)
	if reply.Code != wire.CodeOK || !strings.Contains(reply.Message, "being deleted") {
		t.Fatalf("cancel: %+v", reply)
	}
	waitReleased(t, b, a, c)
	for _, s := range []*realSite{a, c} {
		jobs, _, _ := s.site.Jobs(context.Background())
		if len(jobs) != 1 || jobs[0].ExitStatus == nil || *jobs[0].ExitStatus != 271 {
			t.Fatalf("%s's part not deleted: %+v", s.name, jobs)
		}
	}
	if st = status(t, b, st.Job.ID); st.State != wire.JobCancelled || st.Cost <= 0 {
		t.Fatalf("cancelled: %s cost %v", st.State, st.Cost)
	}
}

func auditAll(t *testing.T, e *env) []wire.AuditRecord {
	t.Helper()
	var out []wire.AuditRecord
	s, err := e.js.Stream(context.Background(), wire.AuditStream)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := s.Info(context.Background())
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(context.Background(), seq)
		if err != nil {
			continue
		}
		var r wire.AuditRecord
		if wire.DecodeStrict(m.Data, &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

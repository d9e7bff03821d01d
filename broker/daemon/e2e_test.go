package daemon

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/wire"
)

// realSite is a simulated cluster (agent/simsite) served by the real agent
// over the test's embedded NATS.
type realSite struct {
	name string
	site *simsite.Site
	stop context.CancelFunc
	done chan error
	once sync.Once
}

// startAgent starts a site of nodes × 8 processors with no local work,
// under the real agent, on the env's clock.
func (e *env) startAgent(name string, nodes int) *realSite {
	e.t.Helper()
	return e.startAgentWith(name, nodes, 200*time.Millisecond)
}

// startAgentWith is startAgent with the agent's refresh period (its poll,
// which also re-creates reservations the site lost).
func (e *env) startAgentWith(name string, nodes int, refresh time.Duration) *realSite {
	e.t.Helper()
	site, err := simsite.New(simsite.Config{Site: name, Nodes: nodes, PPN: 8, Speed: 1, MemMB: 1000,
		Policy: sim.EASY, Start: e.clock.Now().Unix(), Clock: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	lg := zerolog.New(zerolog.NewTestWriter(e.t)).Level(zerolog.WarnLevel)
	a, err := agent.New(agent.Config{Site: name, Debounce: 20 * time.Millisecond, Refresh: refresh,
		ForecastTTL: max(time.Minute, 2*refresh)}, agent.Deps{Conn: connect(e.t, e.srv), Snapshotter: site, Reserver: site,
		Now: e.clock.Now, Log: &lg,
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

func (rs *realSite) halt() {
	rs.once.Do(func() {
		rs.stop()
		select {
		case <-rs.done:
		case <-time.After(10 * time.Second):
		}
	})
}

func (rs *realSite) held(t *testing.T) []wire.Reservation {
	t.Helper()
	res, err := rs.site.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestE2ETwoSiteJobSameStartOnBoth(t *testing.T) {
	e := newEnv(t)
	a, c := e.startAgent("alpha", 4), e.startAgent("beta", 4) // 32 procs each
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	rep := submit(t, r.b, "k1", job(48, 3600, 2))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := status(t, r.b, rep.Job)
	if st.State != wire.JobReserved {
		t.Fatalf("state %s: %s", st.State, st.Message)
	}
	ha, hb := a.held(t), c.held(t)
	if len(ha) != 1 || len(hb) != 1 || ha[0].Job != rep.Job || hb[0].Job != rep.Job {
		t.Fatalf("maui-side reservations: alpha %+v beta %+v", ha, hb)
	}
	if ha[0].Start != hb[0].Start || ha[0].End != hb[0].End || ha[0].Start != st.Plan.Start {
		t.Fatalf("different times: alpha %d-%d beta %d-%d plan %d", ha[0].Start, ha[0].End, hb[0].Start, hb[0].End, st.Plan.Start)
	}
	if ha[0].Identity.Account != "proj1" || !strings.Contains(ha[0].Submit, "ADVRES") {
		t.Fatalf("ACL/submit hint: %+v", ha[0])
	}
}

func TestE2ERefusingSiteMakesTheOtherRelease(t *testing.T) {
	e := newEnv(t)
	a, c := e.startAgent("alpha", 4), e.startAgent("beta", 4)
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	// Behind the broker's back, beta's processors are taken after its
	// forecast was published: the agent's re-check must refuse the plan.
	now := e.clock.Now().Unix()
	var all []wire.NodeProcs
	for i := 1; i <= 4; i++ {
		all = append(all, wire.NodeProcs{Node: "beta-n000" + string(rune('0'+i)), Procs: 8})
	}
	if _, err := c.site.Reserve(context.Background(), agent.ReserveSpec{Job: "local-hold", Start: now, End: now + 86400, Nodes: all}); err != nil {
		t.Fatal(err)
	}
	rep := submit(t, r.b, "k1", job(48, 3600, 2))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := status(t, r.b, rep.Job)
	if st.State != wire.JobWaiting || !strings.Contains(st.Message, "beta") {
		t.Fatalf("after beta refused: %s %q", st.State, st.Message)
	}
	if h := a.held(t); len(h) != 0 {
		t.Fatalf("alpha kept %+v after beta refused", h)
	}
	if len(r.b.state.OwedReleases(e.clock.Now().Unix())) != 0 {
		t.Fatal("releases still owed")
	}
}

func TestE2EBrokerKilledBetweenReservesRecovers(t *testing.T) {
	e := newEnv(t)
	a, c := e.startAgent("alpha", 4), e.startAgent("beta", 4)
	first := ""
	crash := e.startBrokerFaults(Faults{Point: func(p string) bool {
		if strings.HasPrefix(p, "answer:") && first == "" {
			first = p // dies right after the first site answered
			return true
		}
		return false
	}}, nil)
	e.waitSites(crash.b, 2)
	rep := submit(t, crash.b, "k1", job(48, 3600, 2))
	if err := crash.b.Cycle(context.Background()); err != ErrCrashed {
		t.Fatalf("cycle: %v", err)
	}
	crash.stop()
	deadline := time.Now().Add(5 * time.Second) // the other reserve still lands
	for len(a.held(t))+len(c.held(t)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	if st := status(t, r.b, rep.Job); st.State != wire.JobWaiting {
		t.Fatalf("after restart: %s", st.State)
	}
	e.clock.Add(5 * time.Second) // past the reserve deadline: releases due
	var st wire.JobStatus
	for try := 0; try < 3; try++ {
		if err := r.b.Cycle(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st = status(t, r.b, rep.Job); st.State == wire.JobReserved {
			break
		}
		waitNewer(t, r.b) // forecasts without the released reservations
	}
	if st.State != wire.JobReserved {
		t.Fatalf("after recovery and replanning: %s %q", st.State, st.Message)
	}
	// Consistent: the sites hold exactly the reservations the broker believes in.
	audit := r.b.Audit(context.Background(), false)
	if len(audit.Findings) != 0 || audit.Checked != 2 || len(audit.Errors) != 0 {
		t.Fatalf("audit after recovery: %+v", audit)
	}
	for _, s := range []*realSite{a, c} {
		h := s.held(t)
		if len(h) != 1 || h[0].Start != st.Plan.Start {
			t.Fatalf("%s holds %+v, plan starts %d", s.name, h, st.Plan.Start)
		}
	}
}

// waitNewer waits (up to 2 s) until a site publishes a newer forecast.
func waitNewer(t *testing.T, b *Broker) {
	t.Helper()
	before := map[string]uint64{}
	for _, s := range b.Sites().Sites {
		before[s.Site] = s.Seq
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range b.Sites().Sites {
			if s.Seq > before[s.Site] {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestE2ESilentSiteExcludedAfterTTL(t *testing.T) {
	e := newEnv(t)
	e.startAgent("alpha", 4)
	c := e.startAgent("beta", 4)
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	c.halt() // beta goes silent
	e.clock.Add(6 * time.Minute)
	waitAge(t, r.b, "alpha")
	sites := r.b.Sites().Sites
	if sites[0].Stale || !sites[1].Stale {
		t.Fatalf("staleness: %+v", sites)
	}
	wide := submit(t, r.b, "k1", job(48, 3600, 2))
	small := submit(t, r.b, "k2", job(16, 3600, 2))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := r.b.Plan(); len(p.Sites) != 1 || p.Sites[0] != "alpha" || len(p.Stale) != 1 || p.Stale[0] != "beta" {
		t.Fatalf("plan over %v, stale %v", p.Sites, p.Stale)
	}
	if st := status(t, r.b, wide.Job); st.State != wire.JobWaiting {
		t.Fatalf("job needing beta: %s", st.State)
	}
	if st := status(t, r.b, small.Job); st.State != wire.JobReserved {
		t.Fatalf("job fitting alpha: %s %q", st.State, st.Message)
	}
}

// waitAge waits until site's forecast is fresh at the clock's now.
func waitAge(t *testing.T, b *Broker, site string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range b.Sites().Sites {
			if s.Site == site && !s.Stale {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s not fresh", site)
}

// The agents poll once an hour here: alpha would otherwise re-create the
// reservation removed behind its back itself (held.go) before the audit.
// The repaired reservation ends where the original did (issue 22.4: the
// repair added the site's slack a second time).
func TestE2EAuditFindsReservationsChangedBehindTheBrokersBack(t *testing.T) {
	e := newEnv(t)
	a, c := e.startAgentWith("alpha", 4, time.Hour), e.startAgentWith("beta", 4, time.Hour)
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	rep := submit(t, r.b, "k1", job(48, 3600, 2))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.b.Audit(context.Background(), false); len(got.Findings) != 0 || got.Checked != 2 {
		t.Fatalf("clean audit: %+v", got)
	}
	orig := a.held(t)
	if len(orig) != 1 {
		t.Fatalf("alpha holds %+v", orig)
	}
	if _, err := a.site.Release(context.Background(), rep.Job); err != nil { // removed behind its back
		t.Fatal(err)
	}
	now := e.clock.Now().Unix()
	if _, err := c.site.Reserve(context.Background(), agent.ReserveSpec{Job: "rogue", Start: now + 7200, End: now + 9000,
		Nodes: []wire.NodeProcs{{Node: "beta-n0004", Procs: 8}}, Identity: wire.Identity{User: "mallory"}}); err != nil {
		t.Fatal(err)
	}
	got := r.b.Audit(context.Background(), true)
	if len(got.Findings) != 2 {
		t.Fatalf("findings %+v", got.Findings)
	}
	miss, orphan := got.Findings[0], got.Findings[1]
	if miss.Kind != wire.DriftMissing || miss.Site != "alpha" || miss.Job != rep.Job {
		t.Fatalf("missing: %+v", miss)
	}
	if orphan.Kind != wire.DriftOrphaned || orphan.Site != "beta" || orphan.Job != "rogue" {
		t.Fatalf("orphan: %+v", orphan)
	}
	if !strings.HasPrefix(miss.Repair, "re-reserved") || !strings.HasPrefix(orphan.Repair, "released") {
		t.Fatalf("repairs %q / %q", miss.Repair, orphan.Repair)
	}
	if now := a.held(t); len(now) != 1 || now[0].Start != orig[0].Start || now[0].End != orig[0].End {
		t.Fatalf("repaired %+v, was %+v: same start and end wanted", now, orig)
	}
	if again := r.b.Audit(context.Background(), false); len(again.Findings) != 0 {
		t.Fatalf("after repair: %+v", again.Findings)
	}
}

func TestE2ERetriedSubmissionOverNATSCreatesOneJob(t *testing.T) {
	e := newEnv(t)
	r := e.startBroker(nil)
	nc := connect(t, e.srv)
	req := []byte(`{"type":"submit.v1","request_id":"same-key","job":{"procs":4,"walltime":60,"max_price":1,"user":"alice"}}`)
	var ids []string
	for i := 0; i < 3; i++ {
		m, err := nc.Request(wire.BrokerSubject(wire.VerbSubmit), req, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var rep wire.SubmitReply
		if err := jsonUnmarshal(m.Data, &rep); err != nil || rep.Code != wire.CodeOK {
			t.Fatalf("reply %s %v", m.Data, err)
		}
		ids = append(ids, rep.Job)
	}
	if ids[0] != ids[1] || ids[1] != ids[2] {
		t.Fatalf("ids %v", ids)
	}
	if n := len(r.b.Status(wire.StatusRequest{All: true}).Jobs); n != 1 {
		t.Fatalf("%d jobs", n)
	}
}

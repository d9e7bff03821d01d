package natsref

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/broker"
	"lookahead/broker/brokertest"
	"lookahead/broker/client"
	"lookahead/broker/daemon"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/natsembed"
	"lookahead/wire"
)

// TestRealDaemonsWorkUnderTheReferencePermissions runs the real broker and
// two real agents (on simulated sites) with the identities of grid.conf,
// and has alice submit a job that needs both sites: it must be reserved on
// both, the operator's audit must find everything in order, and no client
// may hit a permission violation on the way. A permission the daemons need
// but grid.conf forgot fails this test.
func TestRealDaemonsWorkUnderTheReferencePermissions(t *testing.T) {
	g := runRealGrid(t)
	s, ctx, b, brokerConn, sites, agents := g.srv, g.ctx, g.broker, g.brokerConn, g.sites, g.agents

	aliceConn := connect(t, s, aliceCfg)
	alice := client.New(aliceConn.Conn, "alice")
	waitFor(t, "both sites fresh at the broker", func() bool {
		r, err := alice.Sites(ctx)
		if err != nil {
			return false
		}
		fresh := 0
		for _, st := range r.Sites {
			if !st.Stale {
				fresh++
			}
		}
		return fresh == 2
	})

	job := forecast.JobRequest{Procs: 24, Walltime: 1800, MaxPrice: 10, User: "alice", Account: "proj1",
		Criterion: "earliest-start"}
	reply, err := alice.Submit(ctx, job, client.NewRequestID())
	if err != nil || reply.Code != wire.CodeOK {
		t.Fatalf("alice submits: %+v %v", reply, err)
	}
	var st wire.JobStatus
	waitFor(t, "job "+reply.Job+" reserved", func() bool {
		r, err := alice.Status(ctx, reply.Job, false)
		if err != nil || len(r.Jobs) != 1 {
			return false
		}
		st = r.Jobs[0]
		return st.State == wire.JobReserved
	})
	held := map[string]bool{}
	for site, ss := range sites {
		rs, err := ss.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Job == reply.Job {
				held[site] = true
			}
		}
	}
	if !held["alpha"] || !held["beta"] {
		t.Fatalf("reservations of %s held on %v, want alpha and beta (status %+v)", reply.Job, held, st)
	}

	opConn := connect(t, s, operatorCfg)
	hostileSite(t, ctx, agents["alpha"], reply.Job)
	waitFor(t, "the broker to refuse alpha's job event", func() bool { _, ev := b.Refused(); return ev == 1 })
	seesOnlyOwnJobs(t, ctx, client.New(aliceConn.Conn, "alice"), client.New(opConn.Conn, "operator"), reply.Job)
	report, err := client.New(opConn.Conn, "operator").Audit(ctx, false)
	if err != nil {
		t.Fatalf("operator audit: %v", err)
	}
	if report.Code != wire.CodeOK || len(report.Findings) != 0 || len(report.Errors) != 0 || len(report.Sites) != 2 {
		t.Fatalf("audit: %+v", report)
	}
	recs, bad, err := client.New(opConn.Conn, "operator").AuditLog(ctx, client.LogFilter{Job: reply.Job})
	if err != nil || bad != 0 {
		t.Fatalf("operator reads the audit trail: %v (%d bad records)", err, bad)
	}
	origins := map[string]bool{}
	for _, r := range recs {
		origins[r.Origin+" "+r.Action] = true
		if r.Mismatch != "" {
			origins[r.Origin+" "+r.Action+" forged"] = true
		}
	}
	for _, want := range []string{"alpha reserve", "beta reserve", "broker commit", "alpha commit forged"} {
		if !origins[want] {
			t.Errorf("audit trail of %s lacks %q: has %v", reply.Job, want, origins)
		}
	}
	if origins["broker commit forged"] || origins["beta commit forged"] {
		t.Errorf("alpha's forged record shown under another origin: %v", origins)
	}
	t.Logf("%s reserved on %v; audit checked %d reservation(s) on %v, no findings", reply.Job, held, report.Checked, report.Sites)
	for name, c := range map[string]*conn{"broker": brokerConn, "alpha": agents["alpha"], "beta": agents["beta"],
		"alice": aliceConn, "operator": opConn} {
		c.Flush()
		select {
		case err := <-c.errs:
			t.Errorf("%s hit %v", name, err)
		default:
		}
	}
}

// realGrid is grid.conf's server with the real broker daemon and two real
// agents (simulated sites alpha and beta, 4 × 4 processors), each under
// its identity, the streams made by the admin's init.
type realGrid struct {
	srv        *natsembed.Server
	ctx        context.Context
	broker     *daemon.Broker
	brokerConn *conn
	sites      map[string]*simsite.Site
	agents     map[string]*conn
}

func runRealGrid(t *testing.T) *realGrid {
	t.Helper()
	s := startGrid(t)
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	g := &realGrid{srv: s, ctx: ctx, brokerConn: connect(t, s, brokerCfg), sites: map[string]*simsite.Site{}, agents: map[string]*conn{}}
	setupBroker(t, g.brokerConn) // the admin's lookahead-broker init
	b, err := daemon.New(g.brokerConn.Conn, daemon.Config{
		CycleInterval: 200 * time.Millisecond, Debounce: 50 * time.Millisecond,
		ReserveTimeout: 5 * time.Second, StartMargin: 2 * time.Second,
		Planner: brokertest.Planner, Queue: daemon.FCFS, Log: log,
		Policy: broker.Policy{Identities: map[string]broker.Allowed{
			"alice":    {Users: []string{"alice"}, Accounts: []string{"*"}},
			"operator": {Users: []string{"*"}, Accounts: []string{"*"}},
		}, Operators: []string{"operator"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	runDaemon(t, ctx, "broker", b.Run)
	select {
	case <-b.Ready():
	case <-time.After(waitLimit):
		t.Fatal("broker not ready")
	}
	g.broker = b
	for site, cfg := range map[string]*conn{"alpha": connect(t, s, alphaCfg), "beta": connect(t, s, betaCfg)} {
		ss, err := simsite.New(simsite.Config{Site: site, Nodes: 4, PPN: 4, Policy: sim.EASY, Start: time.Now().Unix()})
		if err != nil {
			t.Fatal(err)
		}
		eng := agent.BuiltinEngine{Horizon: 6 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}
		a, err := agent.New(agent.Config{Site: site}, agent.Deps{Conn: cfg.Conn, Snapshotter: ss, Engine: eng, Reserver: ss, Now: time.Now})
		if err != nil {
			t.Fatal(err)
		}
		runDaemon(t, ctx, site, a.Run)
		g.sites[site], g.agents[site] = ss, cfg
	}
	return g
}

func runDaemon(t *testing.T, ctx context.Context, name string, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && ctx.Err() == nil {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(waitLimit):
			t.Errorf("%s did not stop", name)
		}
	})
}

// waitFor polls cond until it holds or waitLimit passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(3 * waitLimit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// hostileSite is alpha, whose permissions let it publish only under its
// own name, trying to speak for others in what it may publish (issue 15.3
// and 15.4): a job event on its own subject whose body names beta, and an
// audit record on its own subject whose body claims the broker. The
// broker refuses the first; the trail shows the second as alpha's.
func hostileSite(t *testing.T, ctx context.Context, alpha *conn, job string) {
	t.Helper()
	ev, _ := json.Marshal(wire.JobEvent{Type: wire.TypeJobEvent, Site: "beta", Job: job, State: "failed"})
	publish(t, alpha, wire.JobEventSubject("alpha", job), string(ev))
	rec, _ := json.Marshal(wire.AuditRecord{Type: wire.TypeAudit, Time: time.Now().Unix(), Origin: "broker", Action: "commit",
		Job: job, Site: "beta", Code: wire.CodeOK, Message: "forged by alpha"})
	js, err := jetstream.New(alpha.Conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, wire.AuditSubject("alpha", "commit"), rec); err != nil {
		t.Fatalf("alpha appends to its own audit subject: %v", err)
	}
	alpha.noViolations(t)
}

// seesOnlyOwnJobs: the operator submits a job for bob; alice's status
// shows her job only, the operator's both (issue 15.8). Alice's job is
// still reserved: the hostile site's event changed nothing.
func seesOnlyOwnJobs(t *testing.T, ctx context.Context, alice, operator *client.Client, aliceJob string) {
	t.Helper()
	bobs := forecast.JobRequest{Procs: 1, Walltime: 600, MaxPrice: 1, User: "bob", Account: "proj2"}
	r, err := operator.Submit(ctx, bobs, client.NewRequestID())
	if err != nil || r.Code != wire.CodeOK {
		t.Fatalf("operator submits for bob: %+v %v", r, err)
	}
	ids := func(c *client.Client) map[string]string {
		st, err := c.Status(ctx, "", false)
		if err != nil || st.Code != wire.CodeOK {
			t.Fatalf("status: %v %+v", err, st)
		}
		out := map[string]string{}
		for _, j := range st.Jobs {
			out[j.Job.ID] = j.State
		}
		return out
	}
	if got := ids(alice); len(got) != 1 || got[aliceJob] != wire.JobReserved {
		t.Errorf("alice sees %v, want only her %s, reserved", got, aliceJob)
	}
	if got := ids(operator); len(got) != 2 || got[r.Job] == "" {
		t.Errorf("operator sees %v, want %s and %s", got, aliceJob, r.Job)
	}
	if st, err := alice.Status(ctx, r.Job, false); err != nil || st.Code != wire.CodeNotFound {
		t.Errorf("alice asks for bob's job: %v %+v", err, st)
	}
}

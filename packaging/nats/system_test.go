package natsref

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/broker"
	"lookahead/broker/brokertest"
	"lookahead/broker/client"
	"lookahead/broker/daemon"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/wire"
)

// TestRealDaemonsWorkUnderTheReferencePermissions runs the real broker and
// two real agents (on simulated sites) with the identities of grid.conf,
// and has alice submit a job that needs both sites: it must be reserved on
// both, the operator's audit must find everything in order, and no client
// may hit a permission violation on the way. A permission the daemons need
// but grid.conf forgot fails this test.
func TestRealDaemonsWorkUnderTheReferencePermissions(t *testing.T) {
	s := startGrid(t)
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	brokerConn := connect(t, s, brokerCfg)
	b, err := daemon.New(brokerConn.Conn, daemon.Config{
		CycleInterval: 200 * time.Millisecond, Debounce: 50 * time.Millisecond,
		ReserveTimeout: 5 * time.Second, StartMargin: 2 * time.Second,
		Planner: brokertest.Planner, Log: log,
		Policy: broker.Policy{Identities: map[string]broker.Allowed{
			"alice":    {Users: []string{"alice"}, Accounts: []string{"*"}},
			"operator": {Users: []string{"*"}, Accounts: []string{"*"}},
		}},
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

	sites := map[string]*simsite.Site{}
	agents := map[string]*conn{}
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
		sites[site], agents[site] = ss, cfg
	}

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
	}
	for _, want := range []string{"alpha reserve", "beta reserve", "broker commit"} {
		if !origins[want] {
			t.Errorf("audit trail of %s lacks %q: has %v", reply.Job, want, origins)
		}
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

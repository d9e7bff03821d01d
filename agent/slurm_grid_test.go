package agent_test

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/broker/coalloc"
	"lookahead/broker/daemon"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/natsembed"
	"lookahead/slurm/slurmtest"
	"lookahead/wire"
)

// One grid job across a real Slurm cluster (8 cores) and a simulated
// Torque/Maui-kind site (2 × 4 processors): neither can run its 10
// processors alone. The broker, with no Slurm code, plans, reserves on
// both, dispatches both parts and sees them finish; the Slurm part runs
// as the mapped user inside its reservation. A second job reserved on
// both is audited clean; its Slurm reservation changed by hand is
// repaired by the running agent at its next poll (as after a Maui
// restart); changed again while no agent holds it (the agent restarted
// without a hold-state file), the broker's audit finds the drift;
// cancelling the job releases both sites.
func TestLiveGridJobAcrossSlurmAndMaui(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	srv, err := natsembed.Start(natsembed.Options{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	connect := func() *nats.Conn {
		nc, err := nats.Connect(srv.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// runAgent runs an agent until the test ends or the returned stop.
	runAgent := func(cfg agent.Config, deps agent.Deps) (stop func()) {
		deps.Conn = connect()
		deps.Engine = agent.BuiltinEngine{Horizon: 6 * time.Hour, Policy: deps.Engine.(agent.BuiltinEngine).Policy, Pricing: forecast.DefaultPricing()}
		a, err := agent.New(cfg, deps)
		if err != nil {
			t.Fatal(err)
		}
		actx, acancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- a.Run(actx) }()
		stop = sync.OnceFunc(func() {
			acancel()
			if err := <-done; err != nil {
				t.Errorf("agent %s: %v", cfg.Site, err)
			}
		})
		t.Cleanup(stop)
		return stop
	}
	base := agent.Config{Debounce: 100 * time.Millisecond, Refresh: time.Second, ForecastTTL: 30 * time.Second}

	tm, err := simsite.New(simsite.Config{Site: "tm", Nodes: 2, PPN: 4, Policy: sim.EASY, Start: time.Now().Unix(), StartDelay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tmCfg := base
	tmCfg.Site = "tm"
	runAgent(tmCfg, agent.Deps{Snapshotter: tm, Reserver: tm, Executor: tm, Users: gridUsers(t, ""), Engine: agent.BuiltinEngine{Policy: sim.EASY}})

	u2, err := user.Lookup(slurmtest.User2)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u2.Uid)
	pol, err := agent.LoadSlurmPolicy(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	site := slurmSite(t, c)
	site.Site = "sl"
	slCfg := base
	slCfg.Site = "sl"
	slCfg.Dispatch = agent.DispatchConfig{Users: map[string]string{"alice": slurmtest.User2}, MinUID: uid, OutputDir: c.OutDir()}
	slDeps := agent.Deps{Snapshotter: site, Reserver: site, Executor: site, Users: gridUsers(t, c.OutDir()), Engine: agent.BuiltinEngine{Policy: pol.Policy}}
	stopSlurmAgent := runAgent(slCfg, slDeps)

	bnc := connect()
	b, err := daemon.New(bnc, daemon.Config{CycleInterval: time.Second, Debounce: 100 * time.Millisecond, CommitLead: time.Hour,
		StartMargin: 15 * time.Second, StartGrace: time.Minute, ReserveTimeout: 20 * time.Second, ForecastTTL: 30 * time.Second,
		Planner: daemon.CoallocPlanner(daemon.PlannerOptions{Tolerance: coalloc.DefaultTolerance}), Policy: broker.Policy{MaxWalltime: 24 * 3600}})
	if err != nil {
		t.Fatal(err)
	}
	bdone := make(chan error, 1)
	go func() { bdone <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-bdone; err != nil && ctx.Err() == nil {
			t.Errorf("broker: %v", err)
		}
	})
	<-b.Ready()
	for deadline := time.Now().Add(30 * time.Second); len(b.Sites().Sites) < 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the broker knows sites %+v", b.Sites())
		}
	}
	cl := client.New(connect(), "")

	script := []byte("#!/bin/sh\n#lookahead-sim runtime=3s exit=0\necho part $LOOKAHEAD_PART of $LOOKAHEAD_JOB on $LOOKAHEAD_SITE as $(id -un)\nsleep 3\n")
	job := forecast.JobRequest{ID: "x1", Procs: 10, Walltime: 180, MaxSites: 2, User: "alice", Account: "proj1", MaxPrice: 100}
	if r, err := cl.SubmitScript(ctx, job, script, ""); err != nil || r.Code != wire.CodeOK {
		t.Fatalf("submit: %+v, %v", r, err)
	}
	st := waitJob(t, cl, "x1", wire.JobFinished, 3*time.Minute)
	bySite := map[string]wire.PartStatus{}
	for _, p := range st.Parts {
		bySite[p.Site] = p
	}
	sl, ok := bySite["sl"]
	if !ok || bySite["tm"].State == "" {
		t.Fatalf("parts %+v", st.Parts)
	}
	var resv wire.Reservation
	for _, r := range st.Reservations {
		if r.Site == "sl" {
			resv = r
		}
	}
	t.Logf("cross-kind job %s: start %d, parts %+v; the Slurm part started %d s after its reservation's start", st.Job.ID, st.Plan.Start, st.Parts, sl.Start-resv.Start)
	if sl.LocalUser != slurmtest.User2 || sl.ExitStatus == nil || *sl.ExitStatus != 0 || sl.Start < resv.Start || sl.Start >= resv.End {
		t.Errorf("slurm part %+v in reservation %+v", sl, resv)
	}
	if text, _ := os.ReadFile(filepath.Join(c.OutDir(), wire.PartName("x1", sl.Part)+".out")); string(text) !=
		fmt.Sprintf("part %d of x1 on sl as %s\n", sl.Part, slurmtest.User2) {
		t.Errorf("slurm part output %q", text)
	}

	// A reserved job: audited clean, then drifted by hand, then cancelled.
	if r, err := cl.Submit(ctx, forecast.JobRequest{ID: "x2", Procs: 10, Walltime: 1800, MaxSites: 2, User: "alice", Account: "proj1", MaxPrice: 100}, ""); err != nil || r.Code != wire.CodeOK {
		t.Fatalf("submit: %+v, %v", r, err)
	}
	waitJob(t, cl, "x2", wire.JobReserved, time.Minute)
	if rep, err := cl.Audit(ctx, false); err != nil || len(rep.Findings) != 0 || len(rep.Errors) != 0 {
		t.Fatalf("audit of a clean grid: %+v, %v", rep, err)
	}
	// The running agent repairs a hand change at its next poll.
	if r := c.Run("scontrol", "update", "reservationname=la.x2", "users=root"); r.ExitCode != 0 {
		t.Fatalf("update: %+v", r)
	}
	// (the repair may re-create it: a listing between the two lacks it)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r, rs, err := findListed(site, "la.x2")
		if err == nil && r != nil && r.Identity.User == slurmtest.User2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not repair la.x2: %+v %v", rs, err)
		}
	}
	t.Logf("repaired by the agent: %+v", listed(t, site, "la.x2"))
	// An agent that holds no ledger of it (restarted, no hold-state file)
	// leaves a hand change to the audit.
	stopSlurmAgent()
	if r := c.Run("scontrol", "update", "reservationname=la.x2", "users=root"); r.ExitCode != 0 {
		t.Fatalf("update: %+v", r)
	}
	runAgent(slCfg, slDeps)
	waitService(t, bnc, "sl")
	rep, err := cl.Audit(ctx, false)
	if err != nil || len(rep.Findings) != 1 || rep.Findings[0].Site != "sl" || rep.Findings[0].Kind != "drifted" {
		t.Fatalf("audit after a hand change: %+v, %v", rep, err)
	}
	t.Logf("audit finding: %+v", rep.Findings[0])
	if r, err := cl.Cancel(ctx, "x2"); err != nil || r.Code != wire.CodeOK {
		t.Fatalf("cancel: %+v, %v", r, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if rs, _ := site.List(ctx); len(rs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the Slurm reservation of the cancelled job was not released")
		}
	}
}

// gridUsers maps every grid user to the local account of the same name,
// or, on the Slurm site (home set), the private cluster's second user.
func gridUsers(t *testing.T, home string) agent.UserLookup {
	return func(name string) (agent.LocalUser, error) {
		if home == "" {
			return agent.LocalUser{Name: name, UID: 1001, Home: "/home/" + name}, nil
		}
		u, err := user.Lookup(name)
		if err != nil {
			return agent.LocalUser{}, err
		}
		uid, _ := strconv.Atoi(u.Uid)
		return agent.LocalUser{Name: name, UID: uid, Home: home}, nil
	}
}

func waitJob(t *testing.T, cl *client.Client, id, state string, limit time.Duration) wire.JobStatus {
	t.Helper()
	var last wire.JobStatus
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		r, err := cl.Status(context.Background(), id, true)
		if err == nil && len(r.Jobs) == 1 {
			last = r.Jobs[0]
			if last.State == state {
				return last
			}
			if state != wire.JobFailed && (last.State == wire.JobFailed || last.State == wire.JobExpired || last.State == wire.JobCancelled) {
				t.Fatalf("job %s ended %s: %+v", id, last.State, last)
			}
		}
	}
	t.Fatalf("job %s not %s within %v: %+v", id, state, limit, last)
	return last
}

package agent_test

import (
	"bytes"
	"context"
	"os/user"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/broker/coalloc"
	"lookahead/broker/daemon"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/natstest"
	"lookahead/slurm/slurmtest"
)

// slurmGrid is one grid over a real private Slurm (site sl) and a
// simulated Torque/Maui-kind site (tm, 2 × 4 processors): an agent each,
// the broker with the co-allocation planner, all over an embedded NATS
// server. The sl agent's requests reach the SlurmSite through a counting
// wrapper, and its log lines are kept.
type slurmGrid struct {
	t      *testing.T
	c      *slurmtest.Cluster
	site   *agent.SlurmSite
	res    *countingReserver // the sl agent's Reserver
	cl     *client.Client
	bnc    *nats.Conn
	slCfg  agent.Config
	slDeps agent.Deps
	slLog  *lockedBuffer
	stopSl func()
	run    func(cfg agent.Config, deps agent.Deps) (stop func())
}

// gridOptions shape a slurmGrid.
type gridOptions struct {
	commitLead time.Duration // default 1 h
	holdState  string        // the sl agent's hold-state file ("" keeps none)
}

func startSlurmGrid(t *testing.T, c *slurmtest.Cluster, o gridOptions) *slurmGrid {
	t.Helper()
	if o.commitLead == 0 {
		o.commitLead = time.Hour
	}
	srv := natstest.Server(t)
	connect := func() *nats.Conn { return natstest.Connect(t, srv) }
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	g := &slurmGrid{t: t, c: c, slLog: &lockedBuffer{}}
	// run runs an agent until the test ends or the returned stop.
	g.run = func(cfg agent.Config, deps agent.Deps) (stop func()) {
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
	g.run(tmCfg, agent.Deps{Snapshotter: tm, Reserver: tm, Executor: tm, Users: gridUsers(t, ""), Engine: agent.BuiltinEngine{Policy: sim.EASY}})

	pol, err := agent.LoadSlurmPolicy(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	g.site = slurmSite(t, c)
	g.site.Users = agent.SystemUsers
	g.res = &countingReserver{Reserver: g.site}
	g.slCfg = base
	g.slCfg.Site, g.slCfg.HoldState = "sl", o.holdState
	g.slCfg.Dispatch = agent.DispatchConfig{Users: map[string]string{"alice": slurmtest.User2}, MinUID: c.User2UID(), OutputDir: c.OutDir()}
	log := zerolog.New(g.slLog)
	g.slDeps = agent.Deps{Snapshotter: g.site, Reserver: g.res, Executor: g.site, Users: gridUsers(t, c.OutDir()),
		Engine: agent.BuiltinEngine{Policy: pol.Policy}, Log: &log}
	g.stopSl = g.run(g.slCfg, g.slDeps)

	g.bnc = connect()
	bcfg := daemon.Config{CycleInterval: time.Second, Debounce: 100 * time.Millisecond, CommitLead: o.commitLead,
		StartMargin: 15 * time.Second, StartGrace: time.Minute, ReserveTimeout: 20 * time.Second, ForecastTTL: 30 * time.Second,
		Policy: broker.Policy{MaxWalltime: 24 * 3600}}
	bcfg.UsePlanner(daemon.NewPlanner(daemon.PlannerOptions{Tolerance: coalloc.DefaultTolerance}))
	b, err := daemon.New(g.bnc, bcfg)
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
	g.cl = client.New(connect(), "")
	return g
}

// restartSl stops the sl agent and starts it again (its ledger survives
// only in the hold-state file).
func (g *slurmGrid) restartSl() {
	g.stopSl()
	g.stopSl = g.run(g.slCfg, g.slDeps)
	waitService(g.t, g.bnc, "sl")
}

// gridUsers maps every grid user to the local account of the same name,
// or, on the Slurm site (home set), through the system's NSS (as the
// agent does by default) with that home for output.
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

// lockedBuffer is a bytes.Buffer safe for a logger and a test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

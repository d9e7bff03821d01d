package wan

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/broker"
	"lookahead/broker/brokertest"
	"lookahead/broker/client"
	"lookahead/broker/daemon"
	"lookahead/broker/web"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/gridnet"
	"lookahead/internal/logtest"
	"lookahead/internal/natsconn"
	"lookahead/wire"
)

// waitLimit bounds every wait for something the grid must do; no test
// asserts on how long it took.
const waitLimit = 90 * time.Second

// siteTTL is the broker's site TTL here: a site silent longer is stale.
const siteTTL = 4 * time.Second

// grid is the network of internal/gridnet (three grid servers from
// cluster.conf, a leaf node of leaf.conf per site, a proxy on every leaf
// link) with the real broker on the grid servers and a real agent behind
// each site's leaf, on simulated sites, all with grid.conf's identities.
type grid struct {
	t     testing.TB
	net   *gridnet.Net
	b     *daemon.Broker
	op    *client.Client // the operator: submits (for alice), status of all, audit
	js    jetstream.JetStream
	sites map[string]*siteRun
	// snapshot is how long reading a site takes (gridOptions).
	snapshot time.Duration

	mu   sync.Mutex
	seq  int
	reqs map[string]string // request id → job id
}

// siteRun is one site's simulated cluster and its agent.
type siteRun struct {
	name   string
	ss     *simsite.Site
	logs   *logtest.Buffer
	cancel context.CancelFunc
	done   chan error
}

// gridOptions tune newGrid: the sites (default alpha and beta), the
// broker's fail point, agents not started at once.
type gridOptions struct {
	sites     []string
	failPoint func(string) bool
	noAgents  bool
	log       zerolog.Level
	// snapshot is how long reading a site takes (a real site runs qstat,
	// pbsnodes and showres; a simulated one answers at once).
	snapshot time.Duration
	// reserveTimeout is the broker's (default 2 s).
	reserveTimeout time.Duration
}

func newGrid(t testing.TB, o gridOptions) *grid {
	t.Helper()
	n, err := gridnet.Start(gridnet.Options{Dir: t.TempDir(), Sites: o.sites})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := n.WaitJetStream(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitLinks(ctx); err != nil {
		t.Fatal(err)
	}
	g := &grid{t: t, net: n, sites: map[string]*siteRun{}, reqs: map[string]string{}, snapshot: o.snapshot}
	g.init(ctx)
	g.startBroker(o)
	for _, s := range n.Sites() {
		g.sites[s] = g.newSite(s)
		if !o.noAgents {
			g.startAgent(s)
		}
	}
	if !o.noAgents {
		g.waitFresh(n.Sites()...)
	}
	return g
}

func (g *grid) dial(cfg natsconn.Config) *nats.Conn {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, cfg)
	if err != nil {
		g.t.Fatalf("connect as %s: %v", cfg.Name, err)
	}
	g.t.Cleanup(nc.Close)
	return nc
}

// init is the NATS admin's `lookahead-broker init` at three replicas
// (retried while the new cluster elects its leaders).
func (g *grid) init(ctx context.Context) {
	js, _ := jetstream.New(g.dial(g.net.Identity("admin")))
	for {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := daemon.Init(actx, js, 3, 10*time.Minute)
		if err == nil {
			_, err = daemon.InitLease(actx, js, 3, 5*time.Second)
		}
		cancel()
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			g.t.Fatalf("init: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (g *grid) logger(who string, lvl zerolog.Level) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(g.t)).Level(lvl).With().Str("who", who).Logger()
}

// startBroker runs the real broker with the broker's identity on the grid
// servers, and follows its applied events.
func (g *grid) startBroker(o gridOptions) {
	nc := g.dial(g.net.Identity("broker"))
	lvl := o.log
	if lvl == 0 {
		lvl = zerolog.WarnLevel
	}
	reserve := o.reserveTimeout
	if reserve == 0 {
		reserve = 2 * time.Second
	}
	b, err := daemon.New(nc, daemon.Config{
		Name: "broker", CycleInterval: 300 * time.Millisecond, Debounce: 50 * time.Millisecond,
		CommitLead: 10 * time.Minute, ReserveTimeout: reserve, ForecastTTL: siteTTL,
		StartMargin: time.Second, StartGrace: time.Minute, Replicas: 3, LeaseTTL: 5 * time.Second,
		Planner: brokertest.Planner, Queue: daemon.FCFS, Log: g.logger("broker", lvl),
		Policy: broker.Policy{Identities: map[string]broker.Allowed{
			"operator": {Users: []string{"*"}, Accounts: []string{"*"}},
		}, Operators: []string{"operator"}},
	})
	if err != nil {
		g.t.Fatal(err)
	}
	b.InjectFaults(daemon.Faults{Point: o.failPoint})
	g.b = b
	g.js, _ = jetstream.New(nc)
	opConn := g.dial(g.net.Identity("operator"))
	run(g.t, "broker", b.Run)
	select {
	case <-b.Ready():
	case <-time.After(waitLimit):
		g.t.Fatal("broker not ready")
	}
	op := client.New(opConn, "operator")
	op.Timeout = 30 * time.Second
	g.op = op
}

func (g *grid) newSite(name string) *siteRun {
	ss, err := simsite.New(simsite.Config{Site: name, Nodes: 2, PPN: 4, Policy: sim.EASY, Start: time.Now().Unix()})
	if err != nil {
		g.t.Fatal(err)
	}
	return &siteRun{name: name, ss: ss, logs: &logtest.Buffer{}}
}

// localUsers maps the grid user alice to a local account, for the parts
// dispatched to simulated sites.
func localUsers(name string) (agent.LocalUser, error) {
	if name == "alice" {
		return agent.LocalUser{Name: "alice", UID: 1001, Home: "/home/alice"}, nil
	}
	return agent.LocalUser{}, errors.New("no such user")
}

// startAgent runs site's agent, connected to its leaf node as
// docs/operations.md says (nats.js_domain: grid).
func (g *grid) startAgent(name string) {
	s := g.sites[name]
	nc := g.dial(g.net.AgentConfig(name))
	lg := zerolog.New(zerolog.MultiLevelWriter(s.logs, zerolog.NewTestWriter(g.t))).Level(zerolog.InfoLevel).With().Str("who", name).Logger()
	natsconn.LogEvents(nc, lg)
	cfg := agent.Config{Site: name, Debounce: 50 * time.Millisecond, Refresh: 500 * time.Millisecond, ForecastTTL: 10 * time.Second,
		Replicas: 3, JSDomain: gridnet.Domain, EpochState: filepath.Join(g.t.TempDir(), "broker-epoch"),
		RequestTimeout: 10 * time.Second, Dispatch: agent.DispatchConfig{Users: map[string]string{"alice": "alice"}}}
	a, err := agent.New(cfg, agent.Deps{Conn: nc, Snapshotter: slowSnapshot{s.ss, g.snapshot}, Reserver: s.ss, Executor: s.ss, Users: localUsers, Log: &lg,
		Engine: agent.BuiltinEngine{Horizon: 2 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		g.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan error, 1)
	go func() { s.done <- a.Run(ctx) }()
	g.t.Cleanup(func() {
		cancel()
		if err := <-s.done; err != nil {
			g.t.Errorf("agent %s: %v", name, err)
		}
	})
}

// slowSnapshot reads a simulated site in the time a real one takes.
type slowSnapshot struct {
	*simsite.Site
	took time.Duration
}

func (s slowSnapshot) Snapshot(ctx context.Context) (forecast.Snapshot, error) {
	if s.took > 0 {
		t := time.NewTimer(s.took)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return forecast.Snapshot{}, ctx.Err()
		case <-t.C:
		}
	}
	return s.Site.Snapshot(ctx)
}

// run runs a daemon until the test ends; an error it stops with fails
// the test.
func run(t testing.TB, name string, f func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", name, err)
		}
	})
}

// waitFor polls cond until it holds (failing the test after waitLimit).
func (g *grid) waitFor(what string, cond func() bool) {
	g.t.Helper()
	for deadline := time.Now().Add(waitLimit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	g.t.Fatalf("timed out waiting for %s", what)
}

// sitesState is the broker's view of the sites.
func (g *grid) sitesState() map[string]wire.SiteStatus {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := g.op.Sites(ctx)
	out := map[string]wire.SiteStatus{}
	if err != nil {
		return out
	}
	for _, s := range r.Sites {
		out[s.Site] = s
	}
	return out
}

// waitFresh waits until the broker plans on each of sites.
func (g *grid) waitFresh(sites ...string) {
	g.t.Helper()
	g.waitFor("sites "+strings.Join(sites, ", ")+" fresh", func() bool {
		st := g.sitesState()
		for _, s := range sites {
			if x, ok := st[s]; !ok || x.Stale || x.Excluded {
				return false
			}
		}
		return true
	})
}

// submit sends one job for alice as a client does (the same request id on
// every retry) and returns its id.
func (g *grid) submit(job forecast.JobRequest, script string) string {
	g.t.Helper()
	g.mu.Lock()
	g.seq++
	id := fmt.Sprintf("r%d", g.seq)
	g.mu.Unlock()
	job.User, job.Account = "alice", "proj"
	if job.MaxPrice == 0 {
		job.MaxPrice = 100
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var s []byte
	if script != "" {
		s = []byte(script)
	}
	for {
		rep, err := g.op.SubmitScript(ctx, job, s, id)
		if err == nil && rep.Code == wire.CodeOK {
			g.mu.Lock()
			g.reqs[id] = rep.Job
			g.mu.Unlock()
			return rep.Job
		}
		if ctx.Err() != nil {
			g.t.Fatalf("submission %s: %+v %v", id, rep, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// job is the broker's status of one job.
func (g *grid) job(id string) (wire.JobStatus, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := g.op.Status(ctx, id, true)
	if err != nil || len(r.Jobs) != 1 {
		return wire.JobStatus{}, false
	}
	return r.Jobs[0], true
}

// waitState waits until job is in one of states.
func (g *grid) waitState(id string, states ...string) wire.JobStatus {
	g.t.Helper()
	var st wire.JobStatus
	g.waitFor("job "+id+" "+strings.Join(states, " or "), func() bool {
		var ok bool
		st, ok = g.job(id)
		for _, s := range states {
			if ok && st.State == s {
				return true
			}
		}
		return false
	})
	return st
}

// holds reports whether site holds a reservation of job (asked of the
// simulated cluster itself, not through NATS).
func (g *grid) holds(site, job string) bool {
	rs, err := g.sites[site].ss.List(context.Background())
	if err != nil {
		g.t.Fatal(err)
	}
	for _, r := range rs {
		if r.Job == job {
			return true
		}
	}
	return false
}

// holdings is, per site, the jobs it holds reservations of.
func (g *grid) holdings() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for name := range g.sites {
		out[name] = map[string]bool{}
		rs, err := g.sites[name].ss.List(context.Background())
		if err != nil {
			g.t.Fatal(err)
		}
		for _, r := range rs {
			out[name][r.Job] = true
		}
	}
	return out
}

// jobEvents are the events of job in the job stream, oldest first.
func (g *grid) jobEvents(job string) []broker.Event {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	evs, err := web.Streams{JS: g.js}.JobEvents(ctx, job)
	if err != nil {
		g.t.Fatalf("events of %s: %v", job, err)
	}
	return evs
}

// cancel cancels job as alice's operator.
func (g *grid) cancel(job string) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if rep, err := g.op.Cancel(ctx, job); err != nil || rep.Code != wire.CodeOK {
		g.t.Fatalf("cancel %s: %+v %v", job, rep, err)
	}
}

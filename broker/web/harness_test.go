package web_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/broker/daemon"
	"lookahead/broker/web"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/natsembed"
	"lookahead/internal/natstest"
	"lookahead/wire"
)

// clock is a settable clock shared by the broker and the simulated sites.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// grid is a real embedded NATS with JetStream, simulated sites under the
// real agent, a broker whose cycles the test drives, and the web view.
type grid struct {
	t     testing.TB
	srv   *natsembed.Server
	clock *clock
	b     *daemon.Broker
	web   *web.Server
	url   string
	// order is the queue order its brokers plan in ("": the planner's
	// default, fcfs).
	order string
}

func newGrid(t testing.TB) *grid {
	t.Helper()
	return &grid{t: t, srv: natstest.Server(t), clock: &clock{t: time.Now().Truncate(time.Second)}}
}

func (g *grid) connect() *nats.Conn {
	return natstest.Connect(g.t, g.srv)
}

func (g *grid) log() *zerolog.Logger {
	l := zerolog.New(zerolog.NewTestWriter(g.t)).Level(zerolog.WarnLevel)
	return &l
}

// startAgent runs a simulated site of nodes × 8 processors with local
// work (none by default) under the real agent.
func (g *grid) startAgent(name string, nodes int, work ...sim.Job) {
	g.t.Helper()
	site, err := simsite.New(simsite.Config{Site: name, Nodes: nodes, PPN: 8, Speed: 1, MemMB: 1000,
		Policy: sim.EASY, Start: g.clock.Now().Unix(), Clock: g.clock.Now, Workload: work})
	if err != nil {
		g.t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Site: name, Debounce: 20 * time.Millisecond, Refresh: 500 * time.Millisecond,
		ForecastTTL: time.Minute}, agent.Deps{Conn: g.connect(), Snapshotter: site, Reserver: site, Now: g.clock.Now,
		Log: g.log(), Engine: agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing(),
			Unmodelled: []string{"maui.cfg:7: FSPOLICY DEDICATEDPS: fairshare is not modelled"}}})
	if err != nil {
		g.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	g.t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	})
}

// publishBig puts a forecast of nodes × 16 processors straight into the
// bucket (a site whose agent is not needed: its prices, 10 credits and
// up, are above every test job's max price, so nothing is reserved there):
// each node free in two spans at prices that vary across the site.
func (g *grid) publishBig(name string, nodes int) {
	g.t.Helper()
	now := g.clock.Now().Unix()
	f := forecast.Forecast{Version: 1, Site: name, Seq: 1, Generated: now, Horizon: now + 24*3600}
	for i := range nodes {
		n := fmt.Sprintf("%s-n%05d", name, i)
		f.Nodes = append(f.Nodes, forecast.Node{Name: n, Procs: 16, Speed: 1, MemMB: 64000})
		cut := now + int64(3600+(i%48)*1200)
		f.Slots = append(f.Slots, forecast.Slot{Node: n, Procs: 16, Start: now, End: cut, Price: 10 + float64(i%5)/2},
			forecast.Slot{Node: n, Procs: 8, Start: cut + 1800, End: f.Horizon, Price: 12})
	}
	data, err := wire.EncodeForecast(&f)
	if err != nil {
		g.t.Fatal(err)
	}
	js, _ := jetstream.New(g.connect())
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: wire.ForecastBucket, History: 1})
	if err != nil {
		kv, err = js.KeyValue(context.Background(), wire.ForecastBucket)
	}
	if err != nil {
		g.t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), name, data); err != nil {
		g.t.Fatal(err)
	}
}

// startBroker runs the broker "b1" (cycles only when the test asks) and
// the web view on a random loopback port.
func (g *grid) startBroker() {
	g.t.Helper()
	b, done := g.runBroker("b1")
	select {
	case <-b.Ready():
	case err := <-done:
		g.t.Fatalf("broker stopped: %v", err)
	case <-time.After(20 * time.Second):
		g.t.Fatal("broker not ready")
	}
	g.b = b
	g.web, g.url = g.serveWeb(b, web.Config{})
}

// runBroker starts a broker named name; it is active once Ready, a
// standby while another broker holds the lease.
func (g *grid) runBroker(name string) (*daemon.Broker, chan error) {
	g.t.Helper()
	cfg := daemon.Config{Name: name, CycleInterval: time.Hour, Debounce: time.Hour, CommitLead: 10 * time.Minute,
		ReserveTimeout: 5 * time.Second, ForecastTTL: 5 * time.Minute, StartMargin: time.Minute, Clock: g.clock,
		Log: *g.log()}
	cfg.UsePlanner(daemon.NewPlanner(daemon.PlannerOptions{Order: g.order}))
	b, err := daemon.New(g.connect(), cfg)
	if err != nil {
		g.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	g.t.Cleanup(func() { cancel(); <-done })
	return b, done
}

// serveWeb serves b's web view as wc says, on a random loopback port.
func (g *grid) serveWeb(b *daemon.Broker, wc web.Config) (*web.Server, string) {
	g.t.Helper()
	wc.Listen, wc.Version = "127.0.0.1:0", "test"
	ws, err := web.New(wc, b, web.Streams{JS: b.JetStream()})
	if err != nil {
		g.t.Fatal(err)
	}
	if _, err := ws.Listen(); err != nil {
		g.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ws.Run(ctx) }()
	g.t.Cleanup(func() { cancel(); <-done })
	return ws, ws.URL()
}

// waitSites waits until the broker has seen n sites.
func (g *grid) waitSites(n int) {
	g.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if len(g.b.Sites().Sites) >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.t.Fatalf("broker sees %d sites, want %d", len(g.b.Sites().Sites), n)
}

func (g *grid) submit(id string, procs int, wall int64, price float64) string {
	g.t.Helper()
	rep := g.b.Submit(context.Background(), "", wire.SubmitRequest{Type: wire.TypeSubmit, RequestID: id,
		Job: forecast.JobRequest{Procs: procs, Walltime: wall, MaxPrice: price, User: "alice", Account: "proj1"}})
	if rep.Code != wire.CodeOK {
		g.t.Fatalf("submit %s: %s %s", id, rep.Code, rep.Message)
	}
	return rep.Job
}

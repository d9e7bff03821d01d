package agent_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/natstest"
	"lookahead/wire"
)

// t0 is the simulated sites' start.
const t0 = int64(1763780000)

// clock is a settable clock shared by a site and its agent.
type clock struct{ t atomic.Int64 }

func newClock(t int64) *clock        { c := &clock{}; c.t.Store(t); return c }
func (c *clock) Now() time.Time      { return time.Unix(c.t.Load(), 0) }
func (c *clock) Set(t int64)         { c.t.Store(t) }
func (c *clock) Add(d time.Duration) { c.t.Add(int64(d.Seconds())) }

func startNATS(t testing.TB) *nats.Conn {
	t.Helper()
	_, nc := natstest.Start(t)
	return nc
}

// smallWorkload on 4 nodes × 4 procs: j1 runs 8 procs for an hour from
// t0, j2 (16 procs, 2 h) waits for it, j3 (4 procs) arrives at t0+600.
func smallWorkload() []sim.Job {
	return []sim.Job{
		{ID: "1", Procs: 8, Walltime: 3600, Runtime: 3600, Submit: 0},
		{ID: "2", Procs: 16, Walltime: 7200, Runtime: 7200, Submit: 0},
		{ID: "3", Procs: 4, Walltime: 1800, Runtime: 1800, Submit: 600},
	}
}

// countingReserver wraps a Reserver and counts every call reaching it.
type countingReserver struct {
	agent.Reserver
	mu                      sync.Mutex
	reserves, lists, releas int
	// hold, when set, is called at each Reserve before it runs (a test
	// holds the request lock with it).
	hold func(job string)
}

func (c *countingReserver) Reserve(ctx context.Context, s agent.ReserveSpec) (agent.Reserved, error) {
	c.mu.Lock()
	c.reserves++
	hold := c.hold
	c.mu.Unlock()
	if hold != nil {
		hold(s.Job)
	}
	return c.Reserver.Reserve(ctx, s)
}

func (c *countingReserver) List(ctx context.Context) ([]wire.Reservation, error) {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return c.Reserver.List(ctx)
}

func (c *countingReserver) Release(ctx context.Context, job string) (agent.Released, error) {
	c.mu.Lock()
	c.releas++
	c.mu.Unlock()
	return c.Reserver.Release(ctx, job)
}

func (c *countingReserver) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reserves + c.lists + c.releas
}

type fixture struct {
	nc    *nats.Conn
	clock *clock
	site  *simsite.Site
	res   *countingReserver
	agent *agent.Agent
	kv    jetstream.KeyValue
	js    jetstream.JetStream
	// stop cancels the agent's run and waits for it (also at cleanup).
	stop func()
}

// runSimAgent starts an agent on a simulated site (4 × 4 procs) with the
// built-in engine, waits for its first forecast and stops it at cleanup.
func runSimAgent(t *testing.T, cfg agent.Config) *fixture {
	t.Helper()
	return runSimAgentLog(t, cfg, nil)
}

// runSimAgentLog is runSimAgent with the agent's lines sent to log.
func runSimAgentLog(t *testing.T, cfg agent.Config, log *zerolog.Logger) *fixture {
	t.Helper()
	fx := &fixture{nc: startNATS(t), clock: newClock(t0)}
	site, err := simsite.New(simsite.Config{Site: cfg.Site, Nodes: 4, PPN: 4, Policy: sim.EASY,
		Workload: smallWorkload(), Start: t0, Clock: fx.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	fx.site, fx.res = site, &countingReserver{Reserver: site}
	eng := agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}
	fx.agent, err = agent.New(cfg, agent.Deps{Conn: fx.nc, Snapshotter: site, Engine: eng, Reserver: fx.res, Now: fx.clock.Now, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fx.agent.Run(ctx) }()
	var once sync.Once
	fx.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("agent run: %v", err)
			}
		})
	}
	t.Cleanup(fx.stop)
	fx.js, _ = jetstream.New(fx.nc)
	fx.kv = waitBucket(t, fx.js)
	waitForecast(t, fx.kv, cfg.Site, 1)
	waitService(t, fx.nc, cfg.Site)
	return fx
}

func waitBucket(t *testing.T, js jetstream.JetStream) jetstream.KeyValue {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if kv, err := js.KeyValue(context.Background(), wire.ForecastBucket); err == nil {
			return kv
		}
	}
	t.Fatal("forecast bucket never created")
	return nil
}

// waitForecast waits until the site's KV entry holds a forecast with Seq
// at least seq and returns it.
func waitForecast(t *testing.T, kv jetstream.KeyValue, site string, seq uint64) *forecast.Forecast {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		e, err := kv.Get(context.Background(), site)
		if err != nil {
			continue
		}
		f, err := wire.DecodeForecast(e.Value())
		if err != nil {
			t.Fatalf("forecast in KV does not decode: %v", err)
		}
		if f.Seq >= seq {
			return f
		}
	}
	t.Fatalf("no forecast %d of %s in KV", seq, site)
	return nil
}

func waitService(t *testing.T, nc *nats.Conn, site string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := nc.Request(wire.AgentSubject(site, agent.VerbStatus), nil, time.Second); err == nil {
			return
		}
	}
	t.Fatal("agent service never answered")
}

func request[T any](t *testing.T, nc *nats.Conn, site, verb string, req any) T {
	t.Helper()
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := nc.Request(wire.AgentSubject(site, verb), data, 10*time.Second)
	if err != nil {
		t.Fatalf("%s request: %v", verb, err)
	}
	var out T
	if err := json.Unmarshal(msg.Data, &out); err != nil {
		t.Fatalf("%s reply %q: %v", verb, msg.Data, err)
	}
	return out
}

// auditRecordsWhen reads the audit stream until ok holds for its records
// or 10 s have passed, and returns what it read last. An agent answers a
// request before the server has stored its outcome record (it awaits the
// append's acknowledgement after answering), so a test that counts records
// right after its last answer waits for them here; the caller still
// asserts on what it got.
func auditRecordsWhen(t *testing.T, js jetstream.JetStream, ok func([]wire.AuditRecord) bool) []wire.AuditRecord {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs := auditRecords(t, js)
		if ok(recs) || time.Now().After(deadline) {
			return recs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// auditRecords reads every record of the audit stream.
func auditRecords(t *testing.T, js jetstream.JetStream) []wire.AuditRecord {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, wire.AuditStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []wire.AuditRecord
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		var r wire.AuditRecord
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func mustJS(t *testing.T, nc *nats.Conn) jetstream.JetStream {
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// beginTerm appends a term record at sequence epoch to the job stream
// (created as the broker makes it when missing; earlier sequences are
// filled with placeholder events), as a broker beginning that term does:
// the agent then admits requests of epochs up to it.
func beginTerm(t *testing.T, nc *nats.Conn, epoch uint64) {
	t.Helper()
	ctx := context.Background()
	js := mustJS(t, nc)
	s, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: wire.JobStream, Subjects: []string{wire.JobSubjects},
		AllowDirect: true, DenyDelete: true})
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for seq := info.State.LastSeq + 1; seq < epoch; seq++ {
		if _, err := js.Publish(ctx, "lookahead.jobs.filler", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := js.Publish(ctx, wire.JobEpochSubject, []byte(`{"type":"epoch.v1","broker":"test"}`))
	if err != nil || ack.Sequence != epoch {
		t.Fatalf("term record at %v (%v), want sequence %d", ack, err, epoch)
	}
}

// runAgent runs an agent of cfg and deps until the test ends or stop,
// which waits for Run to return (and fails the test on its error).
func runAgent(t *testing.T, cfg agent.Config, deps agent.Deps) (a *agent.Agent, stop func()) {
	t.Helper()
	a, err := agent.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent %s: %v", cfg.Site, err)
		}
	})
	t.Cleanup(stop)
	return a, stop
}

// builtinEngine is the built-in engine (EASY, default pricing) over 24 h.
func builtinEngine() agent.BuiltinEngine {
	return agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}
}

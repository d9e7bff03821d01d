package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"
	"github.com/rs/zerolog"

	"lookahead/broker/brokertest"
	"lookahead/forecast"
	"lookahead/internal/natsembed"
	"lookahead/internal/natstest"
	"lookahead/wire"
)

// testClock is a settable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

const t0 = 1763780000

type env struct {
	t     testing.TB
	srv   *natsembed.Server
	nc    *nats.Conn
	js    jetstream.JetStream
	kv    jetstream.KeyValue
	clock *testClock
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, natsembed.Options{})
}

// newEnvWith is newEnv on a server started with o (its StoreDir the
// test's).
func newEnvWith(t testing.TB, o natsembed.Options) *env {
	t.Helper()
	o.StoreDir = t.TempDir()
	srv := natstest.ServerWith(t, o)
	nc := connect(t, srv)
	js, _ := jetstream.New(nc)
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: wire.ForecastBucket, History: 1})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, srv: srv, nc: nc, js: js, kv: kv, clock: &testClock{t: time.Unix(t0, 0)}}
}

// connect is the test's connection to srv, closed at its end.
var connect = natstest.Connect

// publish puts a forecast of nodes×procs free from now to now+horizon.
func (e *env) publish(site string, seq uint64, nodes, procs int, price float64) forecast.Forecast {
	e.t.Helper()
	now := e.clock.Now().Unix()
	f := forecast.Forecast{Version: 1, Site: site, Seq: seq, Generated: now, Horizon: now + 86400}
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("%s%02d", site, i)
		f.Nodes = append(f.Nodes, forecast.Node{Name: name, Procs: procs, Speed: 1, MemMB: 1000})
		f.Slots = append(f.Slots, forecast.Slot{Node: name, Procs: procs, Start: now, End: f.Horizon, Price: price})
	}
	data, err := wire.EncodeForecast(&f)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.kv.Put(context.Background(), site, data); err != nil {
		e.t.Fatal(err)
	}
	return f
}

type brokerRun struct {
	b      *Broker
	cancel context.CancelFunc
	done   chan error
}

func (e *env) startBroker(mod func(*Config)) *brokerRun {
	e.t.Helper()
	return e.startBrokerFaults(Faults{}, mod)
}

// startBrokerFaults is startBroker with faults armed (InjectFaults).
func (e *env) startBrokerFaults(f Faults, mod func(*Config)) *brokerRun {
	e.t.Helper()
	cfg := Config{
		CycleInterval: time.Hour, Debounce: time.Hour, // tests drive cycles by hand
		CommitLead: 10 * time.Minute, ReserveTimeout: 2 * time.Second, ForecastTTL: 5 * time.Minute,
		StartMargin: time.Minute, Planner: brokertest.Planner, Queue: FCFS, Clock: e.clock,
		LeaseTTL: 3 * time.Second, // a broker stopped at a fail point holds it so long
		Log:      zerolog.New(zerolog.NewTestWriter(e.t)).Level(zerolog.WarnLevel),
	}
	if mod != nil {
		mod(&cfg)
	}
	b, err := New(connect(e.t, e.srv), cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	b.InjectFaults(f)
	ctx, cancel := context.WithCancel(context.Background())
	r := &brokerRun{b: b, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- b.Run(ctx) }()
	select {
	case <-b.Ready():
	case err := <-r.done:
		e.t.Fatalf("broker stopped before ready: %v", err)
	case <-time.After(10 * time.Second):
		e.t.Fatal("broker not ready")
	}
	e.t.Cleanup(func() { r.stop() })
	return r
}

func (r *brokerRun) stop() error {
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(10 * time.Second):
		return fmt.Errorf("broker did not stop")
	}
}

// waitSites waits until the broker has seen n sites.
func (e *env) waitSites(b *Broker, n int) {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if len(b.Sites().Sites) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Fatalf("broker sees %d sites, want %d", len(b.Sites().Sites), n)
}

// testSite answers the agent contract (reserve, release, list) over NATS
// with reservations kept in memory, like a site whose Maui obeys.
type testSite struct {
	name   string
	mu     sync.Mutex
	res    map[string][]wire.Reservation // job → reservations
	refuse string                        // when set, reserve answers this code
	delay  time.Duration
	calls  map[string]int
	svc    micro.Service
	// epoch is the highest broker epoch seen (agents fence older ones);
	// epochs, per job, the epoch of the request that made its reservation;
	// fenced counts refused requests and stale counts any served from an
	// epoch older than one seen before (never, if fencing works).
	epoch  uint64
	epochs map[string]uint64
	fenced int
	// hung, when set, makes the site a hung agent (a SIGSTOPped
	// process): requests are kept unanswered in held and each is told
	// on got.
	hung bool
	kept []micro.Request
	got  chan string
}

// keep holds req unanswered when the site is hung (s.mu not held).
func (s *testSite) keep(verb string, req micro.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hung {
		return false
	}
	s.kept = append(s.kept, req)
	if s.got != nil {
		s.got <- verb
	}
	return true
}

// admit applies the agents' fencing rule (agent/epoch.go); s.mu held.
func (s *testSite) admit(epoch uint64, req micro.Request, job string, release bool) bool {
	if epoch < s.epoch {
		s.fenced++
		msg := fmt.Sprintf("epoch %d < %d", epoch, s.epoch)
		if release {
			req.RespondJSON(wire.ReleaseReply{Type: wire.TypeReleaseReply, Job: job, Site: s.name, Code: wire.CodeFenced, Message: msg})
		} else {
			req.RespondJSON(wire.ReserveReply{Type: wire.TypeReserveReply, Job: job, Site: s.name, Code: wire.CodeFenced, Message: msg})
		}
		return false
	}
	s.epoch = epoch
	return true
}

func (e *env) startSite(name string) *testSite {
	e.t.Helper()
	s := &testSite{name: name, res: map[string][]wire.Reservation{}, calls: map[string]int{}, epochs: map[string]uint64{}}
	nc := connect(e.t, e.srv)
	svc, err := micro.AddService(nc, micro.Config{Name: wire.AgentServiceName, Version: "0.0.1"})
	if err != nil {
		e.t.Fatal(err)
	}
	for verb, h := range map[string]micro.HandlerFunc{wire.VerbReserve: s.reserve, wire.VerbRelease: s.release, wire.VerbList: s.list} {
		if err := svc.AddEndpoint(name+"-"+verb, h, micro.WithEndpointSubject(wire.AgentSubject(name, verb))); err != nil {
			e.t.Fatal(err)
		}
	}
	// The endpoints' subscriptions are sent asynchronously: a commit
	// fired right away got "no responders" (issue 23.12). The server has
	// them once it answered this connection's PING.
	if err := nc.Flush(); err != nil {
		e.t.Fatal(err)
	}
	s.svc = svc
	e.t.Cleanup(func() { svc.Stop() })
	return s
}

func (s *testSite) reserve(req micro.Request) {
	if s.keep(wire.VerbReserve, req) {
		return
	}
	var r wire.ReserveRequest
	json.Unmarshal(req.Data(), &r)
	s.mu.Lock()
	s.calls["reserve"]++
	delay, refuse := s.delay, s.refuse
	s.mu.Unlock()
	time.Sleep(delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.admit(r.Epoch, req, r.Job, false) {
		return
	}
	if refuse != "" {
		req.RespondJSON(wire.ReserveReply{Type: wire.TypeReserveReply, Job: r.Job, Site: s.name, Code: refuse, Message: "refused by test"})
		return
	}
	if existing := s.res[r.Job]; len(existing) > 0 {
		req.RespondJSON(wire.ReserveReply{Type: wire.TypeReserveReply, Job: r.Job, Site: s.name, Code: wire.CodeOK, Reservations: existing})
		return
	}
	res := wire.Reservation{ID: r.Job + ".0", Job: r.Job, Site: s.name, Start: r.Start, End: r.Start + r.Duration, Nodes: r.Nodes, Identity: r.Identity}
	s.res[r.Job] = []wire.Reservation{res}
	s.epochs[r.Job] = r.Epoch
	req.RespondJSON(wire.ReserveReply{Type: wire.TypeReserveReply, Job: r.Job, Site: s.name, Code: wire.CodeOK, Reservations: s.res[r.Job]})
}

func (s *testSite) release(req micro.Request) {
	if s.keep(wire.VerbRelease, req) {
		return
	}
	var r wire.ReleaseRequest
	json.Unmarshal(req.Data(), &r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["release"]++
	if !s.admit(r.Epoch, req, r.Job, true) {
		return
	}
	rel := s.res[r.Job]
	delete(s.res, r.Job)
	delete(s.epochs, r.Job)
	reply := wire.ReleaseReply{Type: wire.TypeReleaseReply, Job: r.Job, Site: s.name, Code: wire.CodeOK}
	for _, x := range rel {
		reply.Released = append(reply.Released, x.ID)
	}
	if len(rel) == 0 {
		reply.Note = "nothing to release"
	}
	req.RespondJSON(reply)
}

func (s *testSite) list(req micro.Request) {
	if s.keep(wire.VerbList, req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []wire.Reservation{}
	for _, rs := range s.res {
		out = append(out, rs...)
	}
	req.RespondJSON(wire.ListReply{Type: wire.TypeListReply, Site: s.name, Code: wire.CodeOK, Reservations: out})
}

func (s *testSite) held() map[string][]wire.Reservation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]wire.Reservation{}
	for k, v := range s.res {
		out[k] = v
	}
	return out
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

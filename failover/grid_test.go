package failover

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/broker/brokertest"
	"lookahead/broker/daemon"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/natsconn"
	"lookahead/internal/natsembed"
	"lookahead/wire"
)

// leaseTTL is the brokers' lease in these tests: above a stream leader's
// re-election on this machine (about 3.2 s), short enough for CI.
const leaseTTL = 5 * time.Second

// grid is a three-server cluster, two brokers, two agents and a client.
type grid struct {
	t       *testing.T
	cl      *natsembed.Cluster
	dir     string
	client  *nats.Conn
	fault   atomic.Value // string: the armed fault point ("" none)
	killed  atomic.Int64 // when the armed fault point stopped a broker (Unix ns)
	pause   chan struct{}
	paused  chan struct{}
	mu      sync.Mutex
	brokers map[string]*brokerRun
	seq     int
	reqs    map[string]string // request id → job id
	// supervise: a broker whose run ended is started again as a standby
	// while a submission waits (systemd's Restart= in production), for the
	// faults whose handling does not restart brokers itself.
	supervise bool
}

type brokerRun struct {
	name   string
	b      *daemon.Broker
	nc     *nats.Conn
	cancel context.CancelFunc
	done   chan error
}

func newGrid(t *testing.T) *grid {
	t.Helper()
	dir := t.TempDir()
	cl, err := natsembed.StartCluster(3, filepath.Join(dir, "nats"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Shutdown)
	if err := cl.WaitJetStream(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	g := &grid{t: t, cl: cl, dir: dir, brokers: map[string]*brokerRun{}, reqs: map[string]string{}}
	g.fault.Store("")
	g.client = g.connect("client")
	return g
}

// connect dials every server of the cluster (natsconn: the daemons' way).
func (g *grid) connect(name string) *nats.Conn {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, natsconn.Config{URL: g.cl.URLs(), Name: name})
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(nc.Close)
	return nc
}

func (g *grid) log(name string) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(g.t)).Level(zerolog.InfoLevel).With().Str("who", name).Logger()
}

// startAgent runs an agent of a simulated site of 2 nodes × 4 processors
// on the wall clock, keeping its highest broker epoch in a file. An agent
// that stops on an error (JetStream not ready yet) is started again a
// second later, as systemd does.
func (g *grid) startAgent(site string) {
	g.t.Helper()
	ss, err := simsite.New(simsite.Config{Site: site, Nodes: 2, PPN: 4, Policy: sim.EASY, Start: time.Now().Unix()})
	if err != nil {
		g.t.Fatal(err)
	}
	lg := g.log(site)
	nc := g.connect("agent-" + site)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			a, err := agent.New(agent.Config{Site: site, Debounce: 50 * time.Millisecond, Refresh: 2 * time.Second,
				ForecastTTL: time.Minute, Replicas: 3, EpochState: filepath.Join(g.dir, site+"-broker-epoch")},
				agent.Deps{Conn: nc, Snapshotter: ss, Reserver: ss, Log: &lg,
					Engine: agent.BuiltinEngine{Horizon: 2 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
			if err != nil {
				g.t.Error(err)
				return
			}
			if err := a.Run(ctx); err != nil && ctx.Err() == nil {
				lg.Warn().Err(err).Msg("agent stopped; starting it again")
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
	}()
	g.t.Cleanup(func() { cancel(); <-done })
}

// waitSites waits until the active broker knows both sites.
func (g *grid) waitSites() {
	g.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var rep wire.SitesReply
		if g.request(wire.BrokerSubject(wire.VerbSites), nil, &rep, 5*time.Second) == nil && len(rep.Sites) == 2 {
			return
		}
	}
	g.t.Fatal("the active broker does not know both sites")
}

// startBroker runs a broker (a new process, as systemd restarts one):
// the armed fault, if any, stops or pauses it in its commit.
func (g *grid) startBroker(name string) *brokerRun {
	g.t.Helper()
	nc := g.connect(name)
	b, err := daemon.New(nc, daemon.Config{
		Name: name, CycleInterval: 500 * time.Millisecond, Debounce: 100 * time.Millisecond,
		CommitLead: 10 * time.Minute, ReserveTimeout: 2 * time.Second, ForecastTTL: time.Minute,
		StartMargin: 5 * time.Second, Replicas: 3, LeaseTTL: leaseTTL,
		Planner: brokertest.Planner, Queue: daemon.FCFS, Log: g.log(name),
	})
	if err != nil {
		g.t.Fatal(err)
	}
	b.InjectFaults(daemon.Faults{Point: g.failPoint, LeasePause: g.leasePause})
	ctx, cancel := context.WithCancel(context.Background())
	r := &brokerRun{name: name, b: b, nc: nc, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- b.Run(ctx) }()
	g.mu.Lock()
	g.brokers[name] = r
	g.mu.Unlock()
	g.t.Cleanup(func() { cancel(); <-r.done; r.done <- nil })
	return r
}

// failPoint: the armed point stops the broker there once ("kill"); the
// pause blocks it until the test resumes it.
func (g *grid) failPoint(p string) bool {
	armed := g.fault.Load().(string)
	switch {
	case armed == "pause" && p == "intent":
		g.fault.Store("")
		g.killed.Store(time.Now().UnixNano())
		close(g.paused)
		<-g.pause
		return false
	case armed != "" && (p == armed || armed == "answer" && len(p) > 7 && p[:7] == "answer:"):
		g.fault.Store("")
		g.killed.Store(time.Now().UnixNano())
		return true
	}
	return false
}

// leasePause blocks the paused broker's renewals too (a stopped process).
func (g *grid) leasePause() {
	g.mu.Lock()
	paused, pause := g.paused, g.pause
	g.mu.Unlock()
	if paused == nil {
		return
	}
	select {
	case <-paused:
		<-pause
	default:
	}
}

// active waits for the active broker and returns it.
func (g *grid) active(within time.Duration) *brokerRun {
	g.t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		g.mu.Lock()
		for _, r := range g.brokers {
			if r.b.Epoch() != 0 {
				g.mu.Unlock()
				return r
			}
		}
		g.mu.Unlock()
	}
	for _, r := range g.brokers {
		ok, why := r.b.Healthy()
		select {
		case err := <-r.done:
			r.done <- err
			why += fmt.Sprintf("; ended: %v", err)
		default:
		}
		g.t.Logf("broker %s: %v %s", r.name, ok, why)
	}
	g.t.Fatalf("no broker active within %v", within)
	return nil
}

// submit sends one job as a client does: the same request id on every
// retry, until a broker answers.
func (g *grid) submit(procs int) {
	g.t.Helper()
	g.seq++
	id := fmt.Sprintf("r%d", g.seq)
	req := wire.SubmitRequest{Type: wire.TypeSubmit, RequestID: id,
		Job: forecast.JobRequest{Procs: procs, Walltime: 600, MaxPrice: 100, User: "alice", Account: "proj"}}
	data, _ := json.Marshal(req)
	last := ""
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		msg, err := g.client.Request(wire.BrokerUserSubject(wire.VerbSubmit, "alice"), data, 5*time.Second)
		if err != nil {
			last = err.Error()
			if g.supervise {
				g.restartEnded()
			}
			continue
		}
		var rep wire.SubmitReply
		if json.Unmarshal(msg.Data, &rep) == nil && rep.Code == wire.CodeOK {
			g.reqs[id] = rep.Job
			return
		}
		last = string(msg.Data)
	}
	g.t.Fatalf("submission %s never answered ok: %s", id, last)
}

// restartEnded starts again, as a standby, every broker whose run ended
// (a step-down, or an error the daemon exits on), saying why it ended.
func (g *grid) restartEnded() {
	g.t.Helper()
	g.mu.Lock()
	var ended []*brokerRun
	for _, r := range g.brokers {
		select {
		case err := <-r.done:
			r.done <- err
			g.t.Logf("broker %s ended (%v); started again as a standby", r.name, err)
			ended = append(ended, r)
		default:
		}
	}
	g.mu.Unlock()
	for _, r := range ended {
		r.nc.Close()
		g.startBroker(r.name)
	}
}

package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/broker/coalloc"
	"lookahead/broker/daemon"
	"lookahead/forecast/sim"
	"lookahead/internal/config"
	"lookahead/internal/durfmt"
	"lookahead/internal/loopback"
	"lookahead/internal/natsembed"
	"lookahead/slurm"
	"lookahead/wire"
)

// Options tune the demo. Zero values take the defaults.
type Options struct {
	Duration time.Duration // real time the demo runs (default 60 s)
	Speed    float64       // simulated seconds per real second (default 600)
	Jobs     int           // grid jobs submitted (default 24)
	Seed     uint64        // of the grid job stream (default 1)
	Out      io.Writer     // live output (default stdout)
	Color    bool          // ANSI colours in the live output
	Log      io.Writer     // component logs (JSON lines); nil: none
	// Planner is the broker's planner, bound with daemon.Config.UsePlanner
	// as lookahead-broker binds it: its queue order and why-texts too
	// (default: the broker's defaults).
	Planner *daemon.Planner
	// Web is the web view's address (default 127.0.0.1:0, a free port on
	// loopback; "off" turns it off): it is printed and up while the demo runs.
	Web string
	// Window is the simulated time over which the grid jobs are submitted
	// (default 0.6 × Duration × Speed).
	Window time.Duration
	// Observer, when set, is told what the live output shows: tests
	// follow the demo by it, not by its lines.
	Observer Observer
}

// Observer is told of each forecast, submission answer and broker job
// event of a demo, from the goroutines that print them.
type Observer interface {
	Forecast(site string)
	Submitted(wire.SubmitReply)
	Event(broker.Event)
}

func (o *Options) defaults() {
	if o.Duration == 0 {
		o.Duration = 60 * time.Second
	}
	if o.Speed == 0 {
		o.Speed = 600
	}
	if o.Jobs == 0 {
		o.Jobs = 24
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Planner == nil {
		o.Planner = daemon.NewPlanner(daemon.PlannerOptions{Tolerance: coalloc.DefaultTolerance}) // the broker's defaults
	}
	if o.Web == "" {
		o.Web = "127.0.0.1:0"
	}
	if o.Window == 0 {
		o.Window = time.Duration(float64(o.Duration) * 0.6 * o.Speed)
	}
}

// Validate refuses options that cannot make a demo.
func (o Options) Validate() error {
	switch {
	case o.Duration < 5*time.Second:
		return fmt.Errorf("duration %s: must be at least 5s", durfmt.Duration(o.Duration))
	case !(o.Speed >= 1 && o.Speed <= 10000): // NaN too
		return fmt.Errorf("speed %v: must be between 1 and 10000", o.Speed)
	case o.Jobs < 1 || o.Jobs > 1000:
		return fmt.Errorf("jobs %d: must be between 1 and 1000", o.Jobs)
	}
	addr, err := config.ListenAddress("web", o.Web)
	if err != nil {
		return err
	}
	if addr != "" && !loopback.Addr(addr) {
		return fmt.Errorf("web %q: the demo serves its web view on a loopback address only (no token)", o.Web)
	}
	return nil
}

type run struct {
	o      Options
	clock  *Clock
	srv    *natsembed.Server
	p      *printer
	log    zerolog.Logger
	b      *daemon.Broker
	stats  *stats
	timers *timers

	launchOnce sync.Once
	launchNC   *nats.Conn
	// scripted are the ids of jobs submitted with a script: the broker
	// dispatches their parts and the sites report them, not the launcher.
	scripted sync.Map
}

// Run runs the demo until its duration passes or ctx is cancelled (Ctrl-C),
// then checks the books (an audit of every site against the broker) and
// returns the summary. The summary is also printed. An interrupted demo
// still returns its summary, with ctx's error.
func Run(ctx context.Context, o Options) (Summary, error) {
	o.defaults()
	if err := o.Validate(); err != nil {
		return Summary{}, err
	}
	r := &run{o: o, clock: NewClock(o.Speed), stats: newStats(), timers: &timers{}}
	r.log = zerolog.Nop()
	if o.Log != nil {
		// Agents and the broker write from many goroutines; they add their
		// own "site" and "component" fields, so none are added here.
		r.log = zerolog.New(zerolog.SyncWriter(o.Log)).With().Timestamp().Logger()
	}
	srv, err := natsembed.Start(natsembed.Options{})
	if err != nil {
		return Summary{}, err
	}
	r.srv = srv
	defer srv.Shutdown()
	r.p = newPrinter(o.Out, r.clock, o.Color)
	return r.run(ctx)
}

func (r *run) connect(name string) (*nats.Conn, error) {
	nc, err := nats.Connect(r.srv.ClientURL(), nats.Name(name))
	if err != nil {
		return nil, fmt.Errorf("connect %s to the embedded nats: %w", name, err)
	}
	return nc, nil
}

func (r *run) run(ctx context.Context) (Summary, error) {
	obs, err := r.connect("demo-observer")
	if err != nil {
		return Summary{}, err
	}
	defer obs.Close()
	if err := r.observe(obs); err != nil {
		return Summary{}, err
	}
	r.p.banner(r.o)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	g, gctx := errgroup.WithContext(runCtx)
	if err := r.startSites(gctx, g); err != nil {
		stop()
		g.Wait()
		return Summary{}, err
	}
	if err := r.startBroker(gctx, g); err != nil {
		stop()
		g.Wait()
		return Summary{}, err
	}
	select {
	case <-r.b.Ready():
	case <-gctx.Done():
		return Summary{}, fmt.Errorf("demo: broker did not start: %w", g.Wait())
	}
	if err := r.startWeb(gctx, g, obs); err != nil {
		stop()
		g.Wait()
		return Summary{}, err
	}
	r.p.nats(r.srv.ClientURL())
	cl := client.New(obs, "")
	r.waitForSites(gctx)
	g.Go(func() error { return r.submitter(gctx, cl) })
	interrupted := r.wait(ctx, gctx)
	sum := r.finish(cl)
	r.timers.stopAll()
	if r.launchNC != nil {
		r.launchNC.Close()
	}
	stop()
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return sum, fmt.Errorf("demo: %w", err)
	}
	r.p.summary(sum, interrupted)
	if interrupted {
		return sum, ctx.Err()
	}
	return sum, nil
}

// wait blocks until the duration passed, ctx ended (true) or a component
// failed.
func (r *run) wait(ctx, gctx context.Context) bool {
	t := time.NewTimer(r.o.Duration)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-ctx.Done():
		r.p.note("interrupted: stopping")
		return true
	case <-gctx.Done():
		return false
	}
}

func (r *run) startSites(ctx context.Context, g *errgroup.Group) error {
	t0 := r.clock.Origin().Unix()
	for _, spec := range Sites {
		jobs, skipped, err := loadTrace(spec.Trace, spec.Name)
		if err != nil {
			return err
		}
		r.stats.localJobs += len(jobs)
		r.stats.skipped += skipped
		policy := sim.EASY
		if spec.Kind == KindSlurm {
			policy, _, _ = slurm.Conf{}.Policy() // Slurm's defaults: backfill, bf_max_job_test 500
		}
		site, err := simsite.New(simsite.Config{Site: spec.Name, Nodes: spec.Nodes, PPN: spec.PPN, Speed: spec.Speed,
			MemMB: spec.MemMB, Features: spec.Features, Policy: policy, Workload: jobs,
			Start: t0 - 6*3600, Clock: r.clock.Now, // the trace starts 6 h before the demo: busy sites, real queues
			StartDelay: 10 * time.Second, KeepCompleted: 6 * time.Hour}) // a part starts at the scheduler's next poll
		if err != nil {
			return err
		}
		nc, err := r.connect("agent-" + spec.Name)
		if err != nil {
			return err
		}
		lg := r.log // the agent adds "site" and "component" itself
		deps := agent.Deps{Conn: nc, Snapshotter: site, Reserver: site, Executor: site, Users: demoAccounts, Now: r.clock.Now, Log: &lg,
			Engine: agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: policy, Pricing: spec.Pricing()}}
		if spec.Kind == KindSlurm { // the agent's Slurm adapter, over the simulated Slurm cluster
			ss := &agent.SlurmSite{Client: simsite.SlurmCluster{Site: site}, Site: spec.Name, Prefix: "la.", Now: r.clock.Now}
			deps.Snapshotter, deps.Reserver, deps.Executor = ss, ss, ss
		}
		a, err := agent.New(agent.Config{Site: spec.Name, Debounce: 100 * time.Millisecond, Refresh: time.Second,
			ForecastTTL: 30 * time.Second, PastGrace: 10 * time.Minute}, deps)
		if err != nil {
			nc.Close()
			return err
		}
		g.Go(func() error {
			defer nc.Close()
			return a.Run(ctx)
		})
	}
	return nil
}

func (r *run) startBroker(ctx context.Context, g *errgroup.Group) error {
	nc, err := r.connect("broker")
	if err != nil {
		return err
	}
	b, err := daemon.New(nc, r.brokerConfig())
	if err != nil {
		nc.Close()
		return err
	}
	r.b = b
	g.Go(func() error {
		defer nc.Close()
		return b.Run(ctx)
	})
	return nil
}

// brokerConfig is the demo broker's: cycles every real second, times in
// simulated seconds, the demo's budgets, and Options.Planner bound as
// lookahead-broker binds its planner (order and why-texts too).
func (r *run) brokerConfig() daemon.Config {
	simSec := func(real time.Duration) time.Duration { return time.Duration(float64(real) * r.o.Speed) }
	c := daemon.Config{
		CycleInterval: time.Second, Debounce: 200 * time.Millisecond,
		CommitLead:     30 * time.Minute,        // simulated
		ForecastTTL:    simSec(5 * time.Second), // 5 real seconds of silence
		StartMargin:    simSec(300 * time.Millisecond),
		StartGrace:     simSec(3 * time.Second), // agents report parts at their builds, every real second
		ReserveTimeout: 5 * time.Second,
		Clock:          r.clock,
		Policy:         broker.Policy{MaxWalltime: 24 * 3600, Budgets: broker.Budgets{Accounts: demoBudgets}},
		Log:            r.log, // the broker adds "component" itself
	}
	c.UsePlanner(r.o.Planner)
	return c
}

// waitForSites waits (at most 30 s) until the broker knows every site's
// forecast: it refuses a job wider than the sites it knows, so a job
// submitted before the last site's first forecast could be refused.
func (r *run) waitForSites(ctx context.Context) {
	for range 300 {
		if len(r.b.Sites().Sites) >= len(Sites) || ctx.Err() != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// submitter sends the grid job stream through the broker's NATS endpoint,
// each job at its simulated submit time.
func (r *run) submitter(ctx context.Context, cl *client.Client) error {
	widest := 0
	for _, s := range Sites {
		widest = max(widest, s.procs())
	}
	for _, gj := range gridJobs(r.o.Jobs, r.o.Window, r.o.Seed, widest) {
		due := r.clock.Origin().Add(gj.At)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(r.clock.Until(due.Unix())):
		}
		reply, err := cl.SubmitScript(ctx, gj.Job, gj.Script, "")
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.p.note("submit failed: " + err.Error())
			continue
		}
		if gj.Script != nil && reply.Code == wire.CodeOK {
			r.scripted.Store(reply.Job, true) // long before its reservation starts: the launcher leaves it alone
		}
		r.stats.submitted(gj, reply)
		r.p.submitted(gj.Job, reply)
		if r.o.Observer != nil {
			r.o.Observer.Submitted(reply)
		}
	}
	return nil
}

// timers are the launcher's pending job events, stopped at shutdown.
type timers struct {
	mu   sync.Mutex
	list []*time.Timer
	done bool
}

func (t *timers) after(d time.Duration, f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.done {
		t.list = append(t.list, time.AfterFunc(d, f))
	}
}

func (t *timers) stopAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	for _, x := range t.list {
		x.Stop()
	}
}

package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"lookahead/forecast"
)

// Deps are the agent's collaborators. Snapshotter and Engine are required.
// Conn may be nil only for BuildOnce (no publishing, no service); Reserver
// nil runs no reservation service; Sources are run by Run and stopped with
// it.
type Deps struct {
	Conn        *nats.Conn
	Snapshotter Snapshotter
	Engine      Engine
	// CheckEngine re-checks reserve requests on a fresh snapshot (default
	// Engine). A site forecasting with Maui SIMULATION, which takes seconds
	// to minutes, can re-check with the built-in engine of the same policy
	// so the broker's commit deadline holds.
	CheckEngine Engine
	Reserver    Reserver
	// Executor runs grid jobs' parts (qsub/qstat/qdel); nil: the site
	// refuses dispatch requests and reports no parts.
	Executor Executor
	// Holder holds and releases local jobs (qhold/qrls -h o); nil: foreign
	// jobs are reported, never held (foreign.go).
	Holder Holder
	// Users finds local accounts for dispatched parts (default
	// SystemUsers).
	Users   UserLookup
	Sources []Source
	Metrics Metrics
	// JobEnds, when set, dates grid parts' ends from the accounting log.
	JobEnds JobEndFinder
	// Log receives the agent's lines, with "site" and "component" fields
	// added by the agent (do not add them to Log again). Nil logs nothing.
	Log *zerolog.Logger
	// Now is the agent's clock (default time.Now). A simulated site on an
	// accelerated clock passes the same clock here, so forecasts and
	// request checks use the site's time; timers (debounce, refresh) stay
	// in real time.
	Now func() time.Time
}

// Agent is one site's daemon. Create it with New, run it with Run; Notify
// and JobStarted are safe for concurrent use from event sources.
type Agent struct {
	cfg  Config
	deps Deps
	log  zerolog.Logger
	met  Metrics
	kick chan struct{}

	acc *Accuracy
	// grid follows grid jobs' parts running in the cluster (build loop only).
	grid gridTracker
	// parts follows dispatched parts in the batch system (build loop only).
	parts partTracker
	pub   *publisher
	// gridLost is when the grid stopped answering publications (zero: it
	// answers); loop goroutine only.
	gridLost time.Time
	// ledger is the grid reservations the agent made (resMu); schedDown
	// says the scheduler did not answer the last check (resMu).
	ledger    heldLedger
	schedDown bool
	// epochs fences brokers that are no longer active (epoch.go).
	epochs epochGuard
	// lag is how late the last publications left (deadline.go).
	lag pubLag
	// paused counts, by job, the requests waiting without the request
	// lock (pause.go; resMu).
	paused map[string]int

	mu     sync.Mutex // guards the fields below
	state  Status
	resMu  sync.Mutex // the request lock: serialises the requests of the envelope (envelope.go)
	svc    micro.Service
	builds int
}

// New checks cfg (after defaults) and deps and returns an agent ready to
// Run. It does no I/O.
func New(cfg Config, deps Deps) (*Agent, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("agent config: %w", err)
	}
	if deps.Snapshotter == nil || deps.Engine == nil {
		return nil, errors.New("agent: a Snapshotter and an Engine are required")
	}
	a := &Agent{cfg: cfg, deps: deps, met: deps.Metrics, kick: make(chan struct{}, 1), acc: NewAccuracy(), paused: map[string]int{}}
	a.epochs.path = cfg.EpochState
	if a.met == nil {
		a.met = nopMetrics{}
	}
	if a.deps.Now == nil {
		a.deps.Now = time.Now
	}
	if a.deps.Users == nil {
		a.deps.Users = SystemUsers
	}
	if a.deps.CheckEngine == nil {
		a.deps.CheckEngine = deps.Engine
	}
	if deps.Log != nil {
		a.log = deps.Log.With().Str("site", cfg.Site).Str("component", "agent").Logger()
	} else {
		a.log = zerolog.Nop()
	}
	a.state.Site = cfg.Site
	return a, nil
}

// Notify tells the agent that something changed at the site (source names
// the event source, for metrics). It never blocks: a burst of calls costs
// one forecast after the debounce delay.
func (a *Agent) Notify(source string) {
	a.met.Event(source)
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// Run publishes forecasts and serves reservation requests until ctx is
// cancelled, then stops the service and its sources and returns nil. It
// returns an error when NATS setup fails or a source fails. The caller
// owns deps.Conn and closes (drains) it after Run returns.
func (a *Agent) Run(ctx context.Context) error {
	if a.deps.Conn == nil {
		return errors.New("agent run: no NATS connection")
	}
	pub, err := a.bind(ctx)
	if err != nil || pub == nil {
		return err // nil: stopped before the grid was reached
	}
	a.pub = pub
	a.epochs.verify = lastTerm(a.deps.Conn, pub.js)
	if a.deps.Reserver != nil {
		if err := a.startService(ctx); err != nil {
			return err
		}
		defer a.stopService()
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.loop(gctx) })
	for _, s := range a.deps.Sources {
		g.Go(func() error { return s.Run(gctx) })
	}
	err = g.Wait()
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)) {
		a.goOffline()
		return nil
	}
	return err
}

// goOffline tells the broker, on a clean stop, that the site's forecast no
// longer holds; a failure is only logged (the site then goes stale after
// the broker's site TTL, as when the agent dies).
func (a *Agent) goOffline() {
	if err := a.pub.offline(a.deps.Now()); err != nil {
		a.log.Warn().Err(err).Msg("offline notice not sent: the broker drops the site after its site TTL")
		return
	}
	a.log.Info().Uint64("seq", a.pub.seq).Msg("offline: told the broker the site leaves planning")
}

// BuildOnce takes a snapshot and forecasts it, without NATS: what
// `lookahead-agent forecast --once` prints. Seq is 0.
func (a *Agent) BuildOnce(ctx context.Context) (*forecast.Forecast, error) {
	b, err := a.build(ctx, a.deps.Now())
	if err != nil {
		return nil, err
	}
	return &b.forecast, nil
}

// JobStarted tells the agent that local job started at (from a Torque
// event): its forecast start-time error is recorded, and a forecast is
// triggered as for Notify.
func (a *Agent) JobStarted(source, job string, at time.Time) {
	if s, ok := a.acc.Started(job, at.Unix()); ok {
		a.met.StartError(time.Unix(s.Predicted, 0), time.Unix(s.Actual, 0))
	}
	a.Notify(source)
}

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/internal/natsconn"
	"lookahead/wire"
)

// ErrCrashed is returned by Run when an injected fault (Faults.Point)
// stopped the broker.
var ErrCrashed = errors.New("broker stopped at an injected fail point")

// Broker is the broker process. Create it with New and run it with Run;
// one Broker runs once.
type Broker struct {
	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
	log zerolog.Logger

	mu sync.Mutex // guards state, sites, plan, planned, inflight
	// reqWrite serializes the request handlers that write (Submit,
	// Cancel). inflight is set while any writer's event is appended
	// without mu (record), and settled (on mu) is signalled when it is
	// applied.
	reqWrite sync.Mutex
	inflight bool
	settled  *sync.Cond
	state    *broker.State
	sites    map[string]*broker.Site
	// capacity is the sites' sizes, summed again only for a site whose
	// forecast changed (under mu; Submit's check of a job's size).
	capacity broker.CapacityCache
	plan     wire.Plan
	planned  map[string]forecast.Allocation
	// queuePos is each planned job's index in the last plan (its queue
	// order); lastIn the last cycle's input, for explanations.
	queuePos map[string]int
	lastIn   broker.CycleInput
	// whys keeps the last cycle's explanations of waiting jobs
	// (explainKept), emptied by each new plan.
	whys map[string]string
	// staleRev is, per site, the forecast revision a reserve was refused
	// as stale on: no commit touches the site again until a newer one.
	staleRev map[string]uint64
	// digests is, per site, the SHA-256 of the last payload taken, so the
	// copy of a forecast that arrives by the other path is not decoded.
	digests map[string][32]byte

	// agents sends requests to sites' agents, their replies on subjects
	// of the site's own (siteinbox.go).
	agents *siteInbox

	kvMu    sync.Mutex
	kv      jetstream.KeyValue // the forecast bucket, once watched
	rereads rereadQueue        // sites whose key a heartbeat asks to read again

	trigger      chan struct{}
	ready        chan struct{}
	readyOnce    sync.Once
	badForecasts atomic.Int64
	badEvents    atomic.Int64
	crashed      atomic.Bool
	faults       Faults     // tests only (faults.go)
	commitMu     sync.Mutex // one commit or release pass at a time
	health       health
	// events counts events recorded since the last snapshot (under mu).
	events int
	// audits are audit records made with mu held, published once it is
	// released (flushAudits), so no JetStream I/O happens under mu.
	audits []wire.AuditRecord
	snap   snapshotter
	term   termState // leadership: lease, epoch (term.go)
	knocks knocker   // requests to sites that do not answer (answering.go)

	// parts keeps the planning input's node lists from cycle to cycle
	// (under commitMu: Cycle).
	parts broker.PartsCache
}

// New checks the config and returns a broker that will use nc.
func New(nc *nats.Conn, cfg Config) (*Broker, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("broker config: %w", err)
	}
	js, err := natsconn.JetStream(nc, cfg.JSDomain)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	b := &Broker{
		cfg: cfg, nc: nc, js: js, log: cfg.Log.With().Str("component", "broker").Logger(),
		state: broker.NewState(), sites: map[string]*broker.Site{}, capacity: broker.CapacityCache{}, planned: map[string]forecast.Allocation{},
		staleRev: map[string]uint64{}, digests: map[string][32]byte{},
		trigger: make(chan struct{}, 1), ready: make(chan struct{}), agents: newSiteInbox(nc),
	}
	b.settled = sync.NewCond(&b.mu)
	return b, nil
}

// JetStream is the broker's JetStream (in the grid's domain, if any), for
// the tools beside it that read its streams (the web view).
func (b *Broker) JetStream() jetstream.JetStream { return b.js }

// Ready is closed once the broker has replayed its queue, seen every stored
// forecast and serves requests.
func (b *Broker) Ready() <-chan struct{} { return b.ready }

func (b *Broker) markReady() { b.readyOnce.Do(func() { close(b.ready) }) }

func (b *Broker) now() int64 { return b.cfg.Clock.Now().Unix() }

// kick asks for a planning cycle soon (debounced).
func (b *Broker) kick() {
	select {
	case b.trigger <- struct{}{}:
	default:
	}
}

// runActive is the active term: replay and epoch (establish), then the
// service, the forecasts and the planning loop until ctx ends.
func (b *Broker) runActive(ctx context.Context) error {
	if err := retryTransient(ctx, b, func() error { return b.establish(ctx) }); err != nil || ctx.Err() != nil {
		return err
	}
	kv, err := ensureBucket(ctx, b.js, forecastBucketConfig(b.cfg.ForecastTTL, b.cfg.Replicas))
	if err != nil {
		return err
	}
	svc, err := b.serve()
	if err != nil {
		return err
	}
	defer svc.Stop()
	subs, err := b.subscribe()
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range subs {
			s.Unsubscribe()
		}
	}()
	sd, err := b.nc.Subscribe(wire.BrokerSubject(wire.VerbStepDown), b.onStepDown)
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", wire.BrokerSubject(wire.VerbStepDown), err)
	}
	defer sd.Unsubscribe()
	g, gctx := errgroup.WithContext(ctx)
	b.knocks.start(gctx)
	g.Go(func() error { return b.knocks.wait(gctx) })
	g.Go(func() error { return b.watchForecasts(gctx, kv) })
	g.Go(func() error { return b.loop(gctx) })
	g.Go(func() error { return b.rereadLoop(gctx) })
	err = g.Wait()
	if b.crashed.Load() {
		return ErrCrashed
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// setupStreams makes sure the audit and job streams exist.
func (b *Broker) setupStreams(ctx context.Context) error {
	if _, err := ensureStream(ctx, b.js, AuditStreamConfig(b.cfg.Replicas)); err != nil {
		return err
	}
	s, err := ensureStream(ctx, b.js, jobStreamConfig(b.cfg.Replicas))
	if err != nil {
		return err
	}
	b.snap.stream = s
	if info, err := s.Info(ctx); err == nil && info.Config.DenyPurge {
		b.snap.purgeDenied = true
		b.log.Info().Msg("the job stream denies purges (created by an older broker): snapshots bound replays, not its size; see docs/broker.md")
	}
	return nil
}

// replayQueue rebuilds the queue from the job stream into a new state; it
// returns the stream's last sequence before the replay began (the replay
// reads at least that far).
func (b *Broker) replayQueue(ctx context.Context) (uint64, error) {
	s := b.snap.stream
	info, err := s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream %s info: %w", wire.JobStream, err)
	}
	b.mu.Lock()
	b.state = broker.NewState()
	events, bad, err := replay(ctx, s, replayer{
		apply: func(e broker.Event) {
			if err := b.state.Apply(e); err != nil {
				b.log.Warn().Err(err).Msg("replay: event skipped")
			}
		},
		restore: func(sn broker.Snapshot) error {
			st, err := broker.FromSnapshot(sn)
			if err == nil {
				b.state = st
			}
			return err
		},
	})
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	b.log.Info().Int("events", events).Int("undecodable", bad).Int("jobs", len(b.state.Jobs())).Msg("queue replayed")
	return info.State.LastSeq, nil
}

// recover rolls back every commit a previous broker left without an
// outcome: the involved sites owe a release (after the reserve deadline, so
// a reserve still in flight lands first) and the job waits again.
func (b *Broker) recover(ctx context.Context) error {
	return b.rollBackUnfinished(ctx, "rolled back: the broker stopped during the commit", func(j *broker.Job) int64 {
		return j.Updated + int64(b.cfg.ReserveTimeout/time.Second) + 1
	})
}

// rollBackUnfinished records a failed outcome for every committing job
// (none is in flight when this runs): its sites owe a release from
// releaseAfter(job) on, and the job waits to be planned again.
func (b *Broker) rollBackUnfinished(ctx context.Context, why string, releaseAfter func(*broker.Job) int64) error {
	defer b.flushAudits(ctx)
	b.lockToWrite()
	defer b.mu.Unlock()
	for _, j := range b.state.InState(wire.JobCommitting) {
		e := broker.Event{
			Kind: broker.EvOutcome, Time: b.now(), Job: j.Req.ID, Release: j.Alloc.Sites(),
			ReleaseAfter: releaseAfter(j), Message: why,
		}
		if err := b.record(ctx, e); err != nil {
			return fmt.Errorf("roll back the commit of %s: %w", j.Req.ID, err)
		}
		b.cfg.Metrics.RolledBack("recovery")
		b.auditLocked(wire.AuditRecord{Action: "rollback", Job: j.Req.ID, Code: wire.CodeInternal, Message: e.Message, Detail: e.Release})
		b.log.Warn().Str("job", j.Req.ID).Strs("sites", e.Release).Str("why", why).Msg("unfinished commit rolled back")
	}
	return nil
}

// record appends e to the job stream, then applies it. Callers hold b.mu;
// record releases it while the event is appended (status, plan, sites and
// the other requests are served meanwhile, never queued behind JetStream)
// and holds it again to apply the event. One event is appended at a time
// (b.inflight, the append slot), so events apply in the order of the
// stream, and a writer that decides after lockToWrite decides on a state
// with every appended event applied. One that decided while another
// writer's event was in flight gets an error if its event no longer
// applies once that one is.
func (b *Broker) record(ctx context.Context, e broker.Event) error {
	waited := b.awaitWrite()
	b.inflight = true
	b.mu.Unlock()
	err := b.appendChecked(ctx, e)
	b.mu.Lock()
	b.inflight = false
	b.settled.Broadcast()
	if err != nil {
		return err
	}
	return b.apply(e, waited)
}

// lockToWrite takes b.mu for a writer that decides what to record: it
// returns once no event is in flight, so the decision sees every event
// appended so far.
func (b *Broker) lockToWrite() {
	b.mu.Lock()
	b.awaitWrite()
}

// awaitWrite waits (b.mu held, released while waiting) until no event is
// being appended; it reports whether it waited.
func (b *Broker) awaitWrite() bool {
	waited := false
	for b.inflight {
		b.settled.Wait()
		waited = true
	}
	return waited
}

func (b *Broker) appendChecked(ctx context.Context, e broker.Event) error {
	err := error(nil)
	if b.cfg.appendHook != nil {
		b.cfg.appendHook(ctx, e)
	}
	if b.faults.AppendError != nil {
		err = b.faults.AppendError(e)
	}
	if err == nil {
		err = appendEvent(ctx, b.appendJob, e)
	}
	b.health.appended(err)
	return err
}

// apply applies an appended event (b.mu held). One that does not apply is
// logged (a replay skips it too); after a wait for a request's event it is
// also an error, since the caller decided it on the state before.
func (b *Broker) apply(e broker.Event, waited bool) error {
	b.events++
	if err := b.state.Apply(e); err != nil {
		b.log.Error().Err(err).Msg("recorded event does not apply")
		if waited {
			return fmt.Errorf("%s event of %s: the job changed while it was recorded: %w", e.Kind, e.Job, err)
		}
	}
	b.announce(e)
	return nil
}

// announce publishes an applied event for live watchers (best effort).
func (b *Broker) announce(e broker.Event) {
	if data, err := json.Marshal(e); err == nil {
		b.nc.Publish(wire.BrokerEventSubject(e.Kind), data)
	}
}

// auditLocked queues an audit record while b.mu is held; the caller
// publishes it with flushAudits after releasing b.mu.
func (b *Broker) auditLocked(r wire.AuditRecord) {
	if r.Time == 0 {
		r.Time = b.now()
	}
	b.audits = append(b.audits, r)
}

// flushAudits publishes the queued audit records (b.mu not held).
func (b *Broker) flushAudits(ctx context.Context) {
	b.mu.Lock()
	rs := b.audits
	b.audits = nil
	b.mu.Unlock()
	for _, r := range rs {
		b.audit(ctx, r)
	}
}

// audit appends an audit record; a failure is logged, never fatal. b.mu
// must not be held (auditLocked). The append has its own deadline
// (auditTimeout): the record of a request that ran out of time is made
// after the request's deadline passed, and must still be kept; only the
// broker stopping (ctx cancelled) cuts it short.
func (b *Broker) audit(ctx context.Context, r wire.AuditRecord) {
	r = b.stampAudit(r)
	actx, cancel := ownDeadline(ctx, auditTimeout)
	defer cancel()
	if err := publishAudit(actx, b.js, r); err != nil {
		b.log.Error().Err(err).Msg("audit record lost")
	}
}

// stampAudit fills an audit record's time and actor and shows it to the
// tests' hook.
func (b *Broker) stampAudit(r wire.AuditRecord) wire.AuditRecord {
	if r.Time == 0 {
		r.Time = b.now()
	}
	if r.Actor == "" {
		r.Actor = b.cfg.Name
	}
	if b.cfg.auditHook != nil {
		b.cfg.auditHook(r)
	}
	return r
}

// auditAll appends records as audit does, all of them sent before the
// first acknowledgement is awaited, so a commit across many sites waits
// one round trip to the audit stream for its answers' records, not one
// per site. They are stored in the order given; a failure is logged.
func (b *Broker) auditAll(ctx context.Context, rs []wire.AuditRecord) {
	actx, cancel := ownDeadline(ctx, auditTimeout)
	defer cancel()
	acks := make([]jetstream.PubAckFuture, 0, len(rs))
	for _, r := range rs {
		subject, data, err := auditMsg(b.stampAudit(r))
		var f jetstream.PubAckFuture
		if err == nil {
			f, err = b.js.PublishAsync(subject, data)
		}
		if err != nil {
			b.log.Error().Err(err).Str("job", r.Job).Str("action", r.Action).Msg("audit record lost")
			continue
		}
		acks = append(acks, f)
	}
	for _, f := range acks {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			b.log.Error().Err(err).Str("subject", f.Msg().Subject).Msg("audit record lost")
		case <-actx.Done():
			b.log.Error().Err(actx.Err()).Int("records", len(acks)).Msg("audit records not acknowledged")
			return
		}
	}
}

// auditTimeout bounds one append to the audit stream.
const auditTimeout = 10 * time.Second

// ownDeadline is a context for work that must outlive ctx's deadline:
// it ends after d, or when ctx is cancelled for another reason than its
// deadline (the broker stopping, the term ending).
func ownDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			cancel()
		}
	})
	return out, func() { stop(); cancel() }
}

// loop runs a cycle every CycleInterval and, debounced, after a kick.
func (b *Broker) loop(ctx context.Context) error {
	select {
	case <-b.ready:
	case <-ctx.Done():
		return nil
	}
	tick := time.NewTicker(b.cfg.CycleInterval)
	defer tick.Stop()
	debounce := time.NewTimer(b.cfg.Debounce)
	defer debounce.Stop()
	snap := time.NewTicker(b.cfg.SnapshotInterval)
	defer snap.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-b.trigger:
			debounce.Reset(b.cfg.Debounce)
			continue
		case <-debounce.C:
		case <-snap.C:
			if err := b.Snapshot(ctx); err != nil {
				b.log.Error().Err(err).Msg("snapshot failed; the next one retries")
			}
			continue
		}
		began := time.Now()
		err := b.Cycle(ctx)
		b.health.cycleDone(began, err)
		if err != nil {
			if b.crashed.Load() {
				return ErrCrashed
			}
			b.log.Error().Err(err).Msg("planning cycle failed")
		}
	}
}

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"lookahead/wire"
)

// ErrSteppedDown is returned by Run when the broker was active and is no
// longer: its lease ran out or was taken, the job stream refused one of
// its conditional appends, a site answered fenced, or an operator asked
// it to step down. The Broker is spent; a new one may run as a standby.
var ErrSteppedDown = errors.New("broker stepped down")

// errStepDownAsked is the cause of a step-down an operator asked for.
var errStepDownAsked = fmt.Errorf("%w: an operator asked it to step down", errLostLeadership)

// SteppedDownOnRequest reports whether Run ended because an operator
// asked the broker to step down (not because it lost its lease).
func SteppedDownOnRequest(err error) bool { return errors.Is(err, errStepDownAsked) }

// termState is the broker's leadership: the lease, and while active the
// term's epoch and the job stream's last sequence it appends after.
type termState struct {
	lease *lease
	// seqMu serializes appends to the job stream: each expects the last
	// sequence this broker wrote (or replayed), so an append by anyone
	// else in between makes the next one fail.
	seqMu   sync.Mutex
	lastSeq uint64
	epoch   atomic.Uint64
	since   atomic.Int64

	mu     sync.Mutex
	cancel context.CancelCauseFunc // ends the active term
	holder *leaseValue             // the lease as a standby last read it
	lost   error                   // why the term ended
}

// epochRecord is what a new active broker appends to the job stream on
// wire.JobEpochSubject to begin its term; its sequence is the epoch.
// Agents read the last one to verify epochs (agent/epoch_verify.go). A
// snapshot's purge would remove it, so the active broker appends a copy
// after each snapshot (keepTermRecord): Epoch names the term a copy
// continues (absent on the record that began it).
type epochRecord struct {
	Type   string `json:"type"`
	Broker string `json:"broker"`
	Since  int64  `json:"since"`
	Epoch  uint64 `json:"epoch,omitempty"`
}

// keepTermRecord appends a copy of the term's record, so the last term
// record on the job stream lies after the snapshot a purge keeps.
func (b *Broker) keepTermRecord(ctx context.Context) error {
	epoch := b.Epoch()
	if epoch == 0 {
		return nil
	}
	data, _ := json.Marshal(epochRecord{Type: "epoch.v1", Broker: b.cfg.Name, Since: b.term.since.Load(), Epoch: epoch})
	if _, err := b.appendJob(ctx, wire.JobEpochSubject, data); err != nil {
		return fmt.Errorf("copy the term record after the snapshot: %w", err)
	}
	return nil
}

// Epoch is the active term's epoch, 0 while the broker is not active.
func (b *Broker) Epoch() uint64 { return b.term.epoch.Load() }

// Leadership is the broker's own term, nil while it is not active.
func (b *Broker) Leadership() *wire.Leadership {
	e := b.Epoch()
	if e == 0 {
		return nil
	}
	return &wire.Leadership{Broker: b.cfg.Name, Epoch: e, Since: b.term.since.Load()}
}

// Run waits as a standby until the broker holds the leadership lease,
// then sets up its term: replays the queue, appends the term's epoch to
// the job stream, rolls back commits a previous broker left without an
// outcome, serves requests and plans in cycles until ctx ends (nil) or
// the broker is no longer active (ErrSteppedDown). Every broker, standby
// or active, answers wire.BrokerHASubject with its own status.
func (b *Broker) Run(ctx context.Context) error {
	var l *lease
	err := retryTransient(ctx, b, func() error {
		if err := b.setupStreams(ctx); err != nil {
			return err
		}
		var err error
		l, err = openLease(ctx, b.js, b.cfg.Name, b.cfg.LeaseTTL, b.cfg.Replicas)
		return err
	})
	if err != nil || ctx.Err() != nil {
		return err
	}
	l.pause = b.faults.LeasePause
	b.term.lease = l
	sub, err := b.nc.Subscribe(wire.BrokerHASubject, b.onHAStatus)
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", wire.BrokerHASubject, err)
	}
	defer sub.Unsubscribe()
	if !b.awaitLease(ctx) {
		return nil
	}
	tctx, cancel := context.WithCancelCause(ctx)
	b.term.mu.Lock()
	b.term.cancel = cancel
	b.term.mu.Unlock()
	err = b.runTerm(tctx)
	cause := context.Cause(tctx)
	cancel(nil)
	return b.endTerm(ctx, err, cause)
}

// endTerm releases the lease (unless the broker "died" at a fail point)
// and says how the term ended.
func (b *Broker) endTerm(ctx context.Context, err, cause error) error {
	b.term.epoch.Store(0)
	b.setLeaderMetric(false, 0)
	if b.crashed.Load() {
		return ErrCrashed // as if the process died: the lease runs out
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if rerr := b.term.lease.release(rctx); rerr != nil {
		b.log.Warn().Err(rerr).Msg("lease not released; it runs out by itself")
	}
	switch {
	case ctx.Err() != nil:
		return nil
	case errors.Is(cause, errLostLeadership):
		return fmt.Errorf("%w: %w", ErrSteppedDown, cause)
	}
	return err
}

// awaitLease tries to take the lease until it succeeds (true) or ctx ends.
func (b *Broker) awaitLease(ctx context.Context) bool {
	every, _ := leaseTimes(b.term.lease.ttl)
	tick, stop := b.term.lease.clock.NewTicker(min(every, time.Second))
	defer stop()
	var last string
	for {
		ok, holder, err := b.term.lease.tryAcquire(ctx)
		if ok {
			b.log.Info().Dur("lease_ttl", b.term.lease.ttl).Msg("lease taken: this broker is active")
			return true
		}
		b.term.mu.Lock()
		b.term.holder = holder
		b.term.mu.Unlock()
		switch {
		case err != nil:
			b.log.Warn().Err(err).Msg("standby: the lease cannot be read; retrying")
		case holder != nil && holder.Broker != last:
			last = holder.Broker
			b.log.Info().Str("active", holder.Broker).Uint64("epoch", holder.Epoch).Msg("standby: another broker is active")
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick:
		}
	}
}

// runTerm keeps the lease and runs the active broker until the term ends.
func (b *Broker) runTerm(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return b.term.lease.keep(gctx, b.Epoch, b.loseLeadership) })
	g.Go(func() error { return b.runActive(gctx) })
	return g.Wait()
}

// acting says whether the broker may act now: its term has not ended and
// its lease is valid at this instant (lease.check). Every side effect
// asks it first — an append to the job stream, a request to a site (a
// reserve, release, dispatch or stop) — so a broker stopped past its
// lease does nothing once it runs again, whatever its renewal ticker has
// not yet noticed. A lease found run out ends the term here.
func (b *Broker) acting() error {
	b.term.mu.Lock()
	lost := b.term.lost
	b.term.mu.Unlock()
	if lost != nil {
		return lost
	}
	if l := b.term.lease; l != nil {
		if err := l.check(); err != nil {
			b.loseLeadership(err)
			return err
		}
	}
	return nil
}

// loseLeadership ends the active term at once: nothing more is planned,
// committed or appended by this broker.
func (b *Broker) loseLeadership(why error) {
	b.term.mu.Lock()
	cancel := b.term.cancel
	first := b.term.lost == nil
	if first {
		b.term.lost = why
	}
	b.term.mu.Unlock()
	if first {
		b.log.Warn().Err(why).Uint64("epoch", b.Epoch()).Msg("stepping down")
	}
	if cancel != nil {
		cancel(why)
	}
}

// establish replays the queue and begins the term: the epoch record is
// appended only after everything the replay read (expected last
// sequence), so no event of an earlier term can follow it; then the
// commits an earlier broker left without an outcome are rolled back
// under this term's epoch. A record appended meanwhile (an earlier
// broker still at work) makes it replay again, three times at most.
func (b *Broker) establish(ctx context.Context) error {
	for try := 1; ; try++ {
		last, err := b.replayQueue(ctx)
		if err != nil {
			return err
		}
		now := b.cfg.Clock.Now().Unix()
		data, _ := json.Marshal(epochRecord{Type: "epoch.v1", Broker: b.cfg.Name, Since: now})
		b.term.seqMu.Lock()
		b.term.lastSeq = last
		ack, err := b.appendAt(ctx, wire.JobEpochSubject, data)
		b.term.seqMu.Unlock()
		if wrongLastSeq(err) && try < 3 {
			b.log.Warn().Err(err).Msg("the job stream moved on during the replay; replaying again")
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: the term's epoch could not be appended to %s: %v", errLostLeadership, wire.JobStream, err)
		}
		b.term.since.Store(now)
		b.term.epoch.Store(ack.Sequence)
		b.setLeaderMetric(true, ack.Sequence)
		b.log.Info().Uint64("epoch", ack.Sequence).Msg("term begun")
		return b.recover(ctx)
	}
}

// appendJob appends to the job stream, expecting its last sequence to be
// the one this broker wrote last. A refusal means another broker appended:
// this one steps down at once.
func (b *Broker) appendJob(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	b.term.seqMu.Lock()
	defer b.term.seqMu.Unlock()
	ack, err := b.appendAt(ctx, subject, data, opts...)
	if wrongLastSeq(err) {
		err = fmt.Errorf("%w: the job stream refused a conditional append (another broker appended): %v", errLostLeadership, err)
		b.loseLeadership(err)
	}
	return ack, err
}

// appendAt publishes with the expected last sequence (b.term.seqMu held),
// while the broker may act.
func (b *Broker) appendAt(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if err := b.acting(); err != nil {
		return nil, fmt.Errorf("not appended: %w", err)
	}
	opts = append(opts, jetstream.WithExpectLastSequence(b.term.lastSeq))
	ack, err := b.js.Publish(ctx, subject, data, opts...)
	if err != nil {
		return nil, err
	}
	if !ack.Duplicate {
		b.term.lastSeq = ack.Sequence
	}
	return ack, nil
}

func wrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

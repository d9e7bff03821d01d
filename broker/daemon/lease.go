package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/internal/durfmt"
	"lookahead/wire"
)

// errLostLeadership ends an active term: the lease could not be renewed in
// time, another broker holds it, the job stream refused a conditional
// append, a site answered fenced, or an operator asked for a step-down.
var errLostLeadership = errors.New("no longer the active broker")

// leaseValue is what the lease key holds. Epoch is 0 until the holder has
// established its term in the job stream.
type leaseValue struct {
	Broker string `json:"broker"`
	// Term is random per acquisition: a renewal whose acknowledgement was
	// lost is recognised as this broker's own write by it.
	Term    string `json:"term,omitempty"`
	Epoch   uint64 `json:"epoch,omitempty"`
	Since   int64  `json:"since"`
	Renewed int64  `json:"renewed"`
}

// lease is one broker's handle on the leadership key. The key expires
// (the bucket's TTL) unless renewed; it is created only when absent and
// renewed only at the revision this broker wrote last, so at most one
// broker holds it. All times here are this host's monotonic clock, read
// through clock.
type lease struct {
	kv    jetstream.KeyValue
	name  string
	ttl   time.Duration
	clock leaseClock
	// pause, when set (Faults.LeasePause), is called before each renewal:
	// a test blocks it to emulate a process stopped past its lease.
	pause func()

	term  string    // this acquisition's random token
	since time.Time // when this term's lease was created

	mu    sync.Mutex // guards rev and valid, read by every side effect (check)
	rev   uint64     // revision this broker wrote last (0: not held)
	valid time.Time  // the lease is ours until then, at the latest
}

// leaseClock is the lease's time: now, and a ticker (its channel and its
// stop). The daemon's is the system clock; tests run it in a
// testing/synctest bubble, where that clock is a fake one.
type leaseClock interface {
	Now() time.Time
	NewTicker(d time.Duration) (<-chan time.Time, func())
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
func (systemClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// held records a write of the lease at revision rev, sent at sent: the
// lease is ours until TTL - guard after it (0.75 TTL).
func (l *lease) held(rev uint64, sent time.Time) {
	_, guard := leaseTimes(l.ttl)
	l.mu.Lock()
	l.rev, l.valid = rev, sent.Add(l.ttl-guard)
	l.mu.Unlock()
}

// revision is the revision this broker wrote last (0: not held).
func (l *lease) revision() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rev
}

// check says whether the lease is this broker's now: held, and valid (a
// quarter of the TTL before the key can expire on the servers, counted
// from the last renewal sent). errLostLeadership otherwise.
func (l *lease) check() error {
	now := l.clock.Now()
	l.mu.Lock()
	rev, valid := l.rev, l.valid
	l.mu.Unlock()
	switch {
	case rev == 0:
		return fmt.Errorf("%w: the lease is not held", errLostLeadership)
	case !now.Before(valid):
		return fmt.Errorf("%w: the lease ran out %v ago (no renewal got through for %v)", errLostLeadership,
			now.Sub(valid).Round(time.Millisecond), now.Sub(valid.Add(-l.ttl*3/4)).Round(time.Millisecond))
	}
	return nil
}

// leaseTimes are the lease's rhythm: renewals every TTL/5, each bounded so
// that a renewal that hangs (a stream leader's re-election) is retried
// before the lease runs out; the holder stops acting a quarter of the TTL
// before the key can expire on the servers.
func leaseTimes(ttl time.Duration) (renew, guard time.Duration) {
	return ttl / 5, ttl / 4
}

// leaseBucketConfig is the bucket of the lease: one key, file storage (the
// revisions, hence the order of terms, survive a cluster restart).
func leaseBucketConfig(ttl time.Duration, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      wire.LeaderBucket,
		Description: "lookahead broker leadership lease",
		History:     1,
		TTL:         ttl,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	}
}

// openLease binds to the lease bucket (created when missing) and takes its
// TTL from the bucket: the servers expire the key by it, whatever this
// broker's configuration says.
func openLease(ctx context.Context, js jetstream.JetStream, name string, ttl time.Duration, replicas int) (*lease, error) {
	kv, err := ensureBucket(ctx, js, leaseBucketConfig(ttl, replicas))
	if err != nil {
		return nil, err
	}
	return leaseOn(ctx, kv, name)
}

// leaseOn is the lease in bucket kv. On a JetStream cluster a bucket that
// another broker has just created may not be served yet ("stream not
// found" while its stream's group elects a leader): its status is asked
// again, a few times over a few seconds, before the start fails.
func leaseOn(ctx context.Context, kv jetstream.KeyValue, name string) (*lease, error) {
	st, err := kv.Status(ctx)
	for wait := 100 * time.Millisecond; errors.Is(err, jetstream.ErrStreamNotFound) && wait <= 3200*time.Millisecond; wait *= 2 {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("kv bucket %s: %w", wire.LeaderBucket, err)
		case <-time.After(wait):
		}
		st, err = kv.Status(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("kv bucket %s: %w", wire.LeaderBucket, err)
	}
	if st.TTL() <= 0 {
		return nil, fmt.Errorf("kv bucket %s has no TTL: a lease in it would never expire (recreate it with `lookahead-broker init`)", wire.LeaderBucket)
	}
	return &lease{kv: kv, name: name, ttl: st.TTL(), clock: systemClock{}}, nil
}

// tryAcquire creates the key if it is absent. It reports the holder when
// another broker has it.
func (l *lease) tryAcquire(ctx context.Context) (bool, *leaseValue, error) {
	sent := l.clock.Now()
	term := randomToken()
	v := leaseValue{Broker: l.name, Term: term, Since: sent.Unix(), Renewed: sent.Unix()}
	data, _ := json.Marshal(v)
	rev, err := l.kv.Create(ctx, wire.LeaderKey, data)
	if err == nil {
		l.term, l.since = term, sent
		l.held(rev, sent)
		return true, nil, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return false, nil, fmt.Errorf("create the lease in %s: %w", wire.LeaderBucket, err)
	}
	holder, _ := l.read(ctx)
	return false, holder, nil
}

// read returns the lease as it is now, nil when nobody holds it.
func (l *lease) read(ctx context.Context) (*leaseValue, error) {
	e, err := l.kv.Get(ctx, wire.LeaderKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the lease: %w", err)
	}
	var v leaseValue
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return nil, fmt.Errorf("read the lease: %w", err)
	}
	return &v, nil
}

// renew writes the lease again at the revision this broker wrote last.
// errLostLeadership when the key moved on (expired, taken, deleted).
func (l *lease) renew(ctx context.Context, epoch uint64) error {
	sent := l.clock.Now()
	v := leaseValue{Broker: l.name, Term: l.term, Epoch: epoch, Since: l.since.Unix(), Renewed: sent.Unix()}
	data, _ := json.Marshal(v)
	rev, err := l.kv.Update(ctx, wire.LeaderKey, data, l.revision())
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyNotFound) {
		own, rerr := l.ownWrite(ctx)
		switch {
		case rerr != nil:
			// (a stream leader's re-election: the next renewal asks again,
			// and keep steps down once the validity has run out)
			return fmt.Errorf("renew the lease: refused (%v), and the lease could not be read to see whose write it holds: %w", err, rerr)
		case own:
			return fmt.Errorf("renew the lease: an earlier renewal landed unacknowledged; retrying at its revision")
		}
		return fmt.Errorf("%w: the lease moved on: %v", errLostLeadership, err)
	}
	if err != nil {
		return fmt.Errorf("renew the lease: %w", err)
	}
	l.held(rev, sent)
	return nil
}

// ownWrite reports whether the key's current entry is this term's own
// write (a renewal that timed out on the client but landed); if so the
// next renewal expects its revision. An error: the key could not be read,
// so whose write it holds is not known. The validity is not extended: it
// stays counted from the last acknowledged renewal.
func (l *lease) ownWrite(ctx context.Context) (bool, error) {
	e, err := l.kv.Get(ctx, wire.LeaderKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var v leaseValue
	l.mu.Lock()
	defer l.mu.Unlock()
	if json.Unmarshal(e.Value(), &v) != nil || v.Term == "" || v.Term != l.term || e.Revision() <= l.rev {
		return false, nil
	}
	l.rev = e.Revision()
	return true, nil
}

func randomToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// keep renews the lease until ctx ends; it returns errLostLeadership (and
// calls lost at once) when the lease is gone or ran out before a renewal
// got through. epoch is read at each renewal (0 until established).
func (l *lease) keep(ctx context.Context, epoch func() uint64, lost func(error)) error {
	every, _ := leaseTimes(l.ttl)
	tick, stop := l.clock.NewTicker(every)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
		}
		if l.pause != nil {
			l.pause()
		}
		err := l.renewBounded(ctx, epoch())
		if err == nil {
			continue
		}
		if errors.Is(err, errLostLeadership) || l.check() != nil {
			if !errors.Is(err, errLostLeadership) {
				err = fmt.Errorf("%w: %v", errLostLeadership, err)
			}
			lost(err)
			return err
		}
	}
}

// renewBounded is one renewal that gives up before the lease runs out.
func (l *lease) renewBounded(ctx context.Context, epoch uint64) error {
	left := time.Until(l.valid)
	if left <= 0 {
		return fmt.Errorf("%w: the lease ran out (not renewed for %s)", errLostLeadership, durfmt.Duration(l.ttl))
	}
	every, _ := leaseTimes(l.ttl)
	rctx, cancel := context.WithTimeout(ctx, min(left, every))
	defer cancel()
	return l.renew(rctx, epoch)
}

// release deletes the lease if this broker still holds it, so a standby
// takes over at once instead of a TTL later. A renewal cut short when the
// term ended may have landed unacknowledged: the key is then one revision
// on, and the delete at that revision (this term's own write, ownWrite)
// is tried once more. A key another broker wrote is left alone.
func (l *lease) release(ctx context.Context) error {
	defer func() {
		l.mu.Lock()
		l.rev = 0
		l.mu.Unlock()
	}()
	if l.revision() == 0 {
		return nil
	}
	err := l.kv.Delete(ctx, wire.LeaderKey, jetstream.LastRevision(l.revision()))
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		if own, rerr := l.ownWrite(ctx); rerr == nil && own {
			err = l.kv.Delete(ctx, wire.LeaderKey, jetstream.LastRevision(l.revision()))
		}
	}
	if err != nil {
		return fmt.Errorf("release the lease: %w", err)
	}
	return nil
}

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"lookahead/wire"

	"github.com/nats-io/nats.go/jetstream"
)

// heldLease is a lease broker b1 holds on an embedded server, and landed,
// which writes the key as a write that landed unacknowledged would (the
// lease's revision is not told).
func heldLease(t *testing.T) (*lease, func(leaseValue)) {
	e := newEnv(t)
	ctx := context.Background()
	l, err := openLease(ctx, e.js, "b1", 3*time.Second, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := l.tryAcquire(ctx); !ok || err != nil {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	return l, func(v leaseValue) {
		data, _ := json.Marshal(v)
		if _, err := l.kv.Update(ctx, wire.LeaderKey, data, l.rev); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeaseRenewalAfterALostAcknowledgement: a renewal that landed but
// whose acknowledgement was lost makes the next one find another revision;
// the broker recognises its own write and keeps the lease. A write by
// another broker ends the term.
func TestLeaseRenewalAfterALostAcknowledgement(t *testing.T) {
	ctx := context.Background()
	l, landed := heldLease(t)
	landed(leaseValue{Broker: "b1", Term: l.term, Epoch: 5})
	if err := l.renew(ctx, 5); err == nil || errors.Is(err, errLostLeadership) {
		t.Fatalf("renewal after its own unacknowledged write: %v, want a retry", err)
	}
	if err := l.renew(ctx, 5); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	landed(leaseValue{Broker: "b2", Term: "another", Epoch: 9})
	if err := l.renew(ctx, 5); !errors.Is(err, errLostLeadership) {
		t.Fatalf("renewal after another broker's write: %v, want the term lost", err)
	}
}

// failingGet is a lease bucket whose reads fail (a stream leader being
// elected) while fail is set.
type failingGet struct {
	jetstream.KeyValue
	fail bool
}

func (f *failingGet) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if f.fail {
		return nil, context.DeadlineExceeded
	}
	return f.KeyValue.Get(ctx, key)
}

// A refused renewal whose lease cannot be read does not end the term at
// once: the broker may still hold it (its own unacknowledged write), so the
// renewal is retried while the lease is valid.
func TestLeaseRenewalWhenTheLeaseCannotBeRead(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l, err := openLease(ctx, e.js, "b1", 3*time.Second, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := l.tryAcquire(ctx); !ok || err != nil {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	data, _ := json.Marshal(leaseValue{Broker: "b1", Term: l.term, Epoch: 5})
	if _, err := l.kv.Update(ctx, wire.LeaderKey, data, l.rev); err != nil { // landed, not told
		t.Fatal(err)
	}
	fg := &failingGet{KeyValue: l.kv, fail: true}
	l.kv = fg
	if err := l.renew(ctx, 5); err == nil || errors.Is(err, errLostLeadership) {
		t.Fatalf("renewal refused with the lease unreadable: %v, want a retry", err)
	}
	fg.fail = false
	if err := l.renew(ctx, 5); err == nil || errors.Is(err, errLostLeadership) {
		t.Fatalf("renewal once readable: %v, want its own write found", err)
	}
	if err := l.renew(ctx, 5); err != nil {
		t.Fatalf("the retry at its own revision: %v", err)
	}
}

// TestLeaseReleaseAfterALostAcknowledgement: a renewal cut short when the
// term ends may still land; the release then finds the key one revision on,
// recognises its own write and deletes it, so a standby takes over at once.
// A key another broker wrote is left alone.
func TestLeaseReleaseAfterALostAcknowledgement(t *testing.T) {
	ctx := context.Background()
	l, landed := heldLease(t)
	landed(leaseValue{Broker: "b1", Term: l.term, Epoch: 5})
	if err := l.release(ctx); err != nil {
		t.Fatalf("release after its own unacknowledged renewal: %v", err)
	}
	if v, err := l.read(ctx); v != nil || err != nil {
		t.Fatalf("the lease after release: %+v %v, want gone", v, err)
	}

	if ok, _, err := l.tryAcquire(ctx); !ok || err != nil {
		t.Fatalf("acquire again: %v %v", ok, err)
	}
	landed(leaseValue{Broker: "b2", Term: "another", Epoch: 9})
	if err := l.release(ctx); err == nil {
		t.Error("release of a lease another broker wrote: no error")
	}
	if v, _ := l.read(ctx); v == nil || v.Broker != "b2" {
		t.Fatalf("another broker's lease after release: %+v, want kept", v)
	}
}

// notYetServed is a lease bucket whose status says "stream not found" the
// first misses times (a bucket another broker has just created on a
// JetStream cluster), then st; it counts the asks.
type notYetServed struct {
	jetstream.KeyValue
	st     jetstream.KeyValueStatus
	misses int
	asked  int
}

func (n *notYetServed) Status(context.Context) (jetstream.KeyValueStatus, error) {
	n.asked++
	if n.misses > 0 {
		n.misses--
		return nil, jetstream.ErrStreamNotFound
	}
	return n.st, nil
}

// TestLeaseOnABucketNotYetServed: a broker starting beside another that has
// just created the lease bucket asks again after 100, 200, 400 … ms
// instead of failing its start; a bucket still not served after 6.3 s (the
// seventh ask) fails the start, saying so. On synctest's clock: the waits
// are exact.
func TestLeaseOnABucketNotYetServed(t *testing.T) {
	e := newEnv(t)
	l, err := openLease(context.Background(), e.js, "b1", 3*time.Second, 1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.kv.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		kv := &notYetServed{st: st, misses: 2}
		t0 := time.Now()
		got, err := leaseOn(context.Background(), kv, "b2")
		if err != nil || got.ttl != 3*time.Second || kv.asked != 3 || time.Since(t0) != 300*time.Millisecond {
			t.Fatalf("after two misses: %v, %v; %d asks over %s, want 3 over 300ms", got, err, kv.asked, time.Since(t0))
		}
		kv, t0 = &notYetServed{st: st, misses: 100}, time.Now()
		if _, err := leaseOn(context.Background(), kv, "b2"); !errors.Is(err, jetstream.ErrStreamNotFound) || kv.asked != 7 || time.Since(t0) != 6300*time.Millisecond {
			t.Fatalf("a bucket never served: %v; %d asks over %s, want 7 over 6.3s", err, kv.asked, time.Since(t0))
		}
	})
}

package daemon

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"lookahead/wire"
)

// The lease's timing on a fake clock (testing/synctest: time moves only
// when every goroutine of the test waits), so what the clock decides is
// pinned exactly and independently of load: when the broker stops acting,
// when it steps down, what it does after a pause. The lease bucket is an
// in-memory one (fakeLeaseKV); the behaviour against a real bucket is in
// lease_test.go and ha_test.go.

const testTTL = 10 * time.Second // renewals every 2 s; valid 7.5 s after a renewal sent

// fakeLeaseKV is the lease bucket: Create succeeds, Update does what
// update says (nil: succeeds).
type fakeLeaseKV struct {
	jetstream.KeyValue
	mu     sync.Mutex
	rev    uint64
	update func(ctx context.Context) error
}

func (f *fakeLeaseKV) Create(context.Context, string, []byte, ...jetstream.KVCreateOpt) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rev++
	return f.rev, nil
}

func (f *fakeLeaseKV) Update(ctx context.Context, _ string, _ []byte, _ uint64) (uint64, error) {
	if f.update != nil {
		if err := f.update(ctx); err != nil {
			return 0, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rev++
	return f.rev, nil
}

func (f *fakeLeaseKV) Delete(context.Context, string, ...jetstream.KVDeleteOpt) error { return nil }

// failing renewals return at once; hanging ones block until their
// deadline (a stream leader being elected).
func failing(context.Context) error { return errors.New("injected: renewal refused") }
func hanging(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// countingJS is the broker's JetStream: it counts publications (the job
// stream appends) and accepts them.
type countingJS struct {
	jetstream.JetStream
	mu        sync.Mutex
	published int
}

func (c *countingJS) Publish(context.Context, string, []byte, ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.published++
	return &jetstream.PubAck{Sequence: uint64(c.published)}, nil
}

// termBroker is an active broker reduced to its term: the lease taken at
// the bubble's start (t = 0) on kv, keep running with pause before each
// renewal; lost receives why the term ended.
type termBroker struct {
	b     *Broker
	js    *countingJS
	ctx   context.Context // the term's; cancelled when it ends
	lost  chan error
	start time.Time
}

func startTerm(t *testing.T, kv *fakeLeaseKV, pause func()) *termBroker {
	t.Helper()
	js := &countingJS{}
	b := &Broker{cfg: Config{Clock: &testClock{t: time.Unix(t0, 0)}}, js: js, log: zerolog.Nop()}
	l := &lease{kv: kv, name: "b1", ttl: testTTL, clock: systemClock{}, pause: pause}
	tb := &termBroker{b: b, js: js, lost: make(chan error, 1), start: time.Now()}
	if ok, _, err := l.tryAcquire(context.Background()); !ok || err != nil {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	b.term.lease = l
	b.term.epoch.Store(7)
	ctx, cancel := context.WithCancelCause(context.Background())
	b.term.cancel, tb.ctx = cancel, ctx
	t.Cleanup(func() { cancel(nil) })
	go func() {
		if err := l.keep(ctx, b.Epoch, b.loseLeadership); err != nil {
			tb.lost <- err
		}
	}()
	return tb
}

// request stamps a reserve request, as every request to a site is.
func (tb *termBroker) request() error {
	_, err := tb.b.stamp(context.Background(), wire.ReserveRequest{Type: wire.TypeReserve, Site: "alpha", Job: "g1"})
	return err
}

// at sleeps until d after the term began.
func (tb *termBroker) at(d time.Duration) { time.Sleep(d - time.Since(tb.start)) }

// TestNoRequestAfterTheLeaseRanOut: renewals fail from t = 0; requests are
// stamped until 0.75 TTL (the lease's validity, counted from the renewal
// sent last: its creation) and none from then on, though keep's next
// tick is at 0.8 TTL; the term ends there. (Before issue 34 a request was
// stamped up to the tick; counting the validity to TTL + guard stamps it
// to 1.25 TTL.)
func TestNoRequestAfterTheLeaseRanOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := startTerm(t, &fakeLeaseKV{update: failing}, nil)
		tb.at(7499 * time.Millisecond)
		if err := tb.request(); err != nil {
			t.Fatalf("request at 0.7499 TTL: %v", err)
		}
		tb.at(7500 * time.Millisecond)
		if err := tb.request(); !errors.Is(err, errLostLeadership) {
			t.Fatalf("request at 0.75 TTL: %v, want none sent", err)
		}
		if _, err := tb.b.appendJob(context.Background(), "lookahead.jobs.g1", []byte("{}")); err == nil || tb.js.published != 0 {
			t.Fatalf("append at 0.75 TTL: %v (%d published), want none", err, tb.js.published)
		}
		if tb.ctx.Err() == nil {
			t.Error("the term goes on after the lease ran out")
		}
	})
}

// TestStepsDownWhenTheLeaseRunsOut: renewals hang (each until its
// deadline, which never passes the lease's validity); the broker steps
// down at 0.75 TTL exactly — when the last renewal gives up — not at
// keep's next tick (0.8 TTL) as it does without keep's own validity test.
func TestStepsDownWhenTheLeaseRunsOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := startTerm(t, &fakeLeaseKV{update: hanging}, nil)
		err := <-tb.lost
		if took := time.Since(tb.start); took != 7500*time.Millisecond || !errors.Is(err, errLostLeadership) {
			t.Fatalf("stepped down after %v (%v), want 7.5 s", took, err)
		}
		if err := tb.request(); err == nil {
			t.Fatal("a request stamped after the step-down")
		}
	})
}

// TestNothingSentAfterAPause: renewals succeed, then the broker is
// stopped (its renewals with it, as a SIGSTOPped process) for 2 TTL. On
// resuming, before its renewal ticker runs again, it sends no request and
// appends nothing: its lease ran out during the pause, and every side
// effect checks it. Its renewal then finds the lease gone and the term
// ends.
func TestNothingSentAfterAPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		paused, resume := make(chan struct{}), make(chan struct{})
		var once sync.Once
		renewals := 0
		tb := startTerm(t, &fakeLeaseKV{}, func() {
			if renewals++; renewals == 3 { // at 0.6 TTL, after two good renewals
				once.Do(func() { close(paused) })
				<-resume
			}
		})
		<-paused
		tb.at(6*time.Second + 2*testTTL)
		if err := tb.request(); !errors.Is(err, errLostLeadership) {
			t.Fatalf("request after a pause of 2 TTL: %v, want none sent", err)
		}
		if _, err := tb.b.appendJob(context.Background(), "lookahead.jobs.g1", []byte("{}")); err == nil || tb.js.published != 0 {
			t.Fatalf("append after the pause: %v (%d published), want none", err, tb.js.published)
		}
		close(resume)
		synctest.Wait()
		if tb.ctx.Err() == nil {
			t.Error("the term goes on after the pause")
		}
	})
}

// TestFencedAnswerDeposes: a site's fenced answer ends the term at once,
// with no append after it to fail: no request is stamped from then on,
// while the lease itself is still valid.
func TestFencedAnswerDeposes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, out := range []any{&wire.ReserveReply{Code: wire.CodeFenced}, &wire.ReleaseReply{Code: wire.CodeFenced},
			&wire.DispatchReply{Code: wire.CodeFenced}, &wire.StopReply{Code: wire.CodeFenced}} {
			tb := startTerm(t, &fakeLeaseKV{}, nil)
			tb.at(time.Second)
			if err := tb.request(); err != nil {
				t.Fatalf("request before: %v", err)
			}
			tb.b.checkFenced("lookahead.agent.alpha.x", out)
			if tb.ctx.Err() == nil || !errors.Is(context.Cause(tb.ctx), errLostLeadership) {
				t.Errorf("%T fenced: the term goes on (%v)", out, context.Cause(tb.ctx))
			}
			if err := tb.request(); err == nil {
				t.Errorf("%T fenced: a request stamped after it", out)
			}
			if err := tb.b.term.lease.check(); err != nil {
				t.Errorf("the lease itself: %v, want still valid", err)
			}
		}
	})
}

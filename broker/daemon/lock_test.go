package daemon

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"lookahead/broker"
	"lookahead/broker/client"
)

// TestRequestHandlersDoNotHoldTheLockAcrossAppends: submit and cancel,
// served over NATS, append their events to the job stream with b.mu free
// (so status, plan and sites requests are not queued behind a slow
// JetStream append), and with a context that carries a deadline.
func TestRequestHandlersDoNotHoldTheLockAcrossAppends(t *testing.T) {
	e := newEnv(t)
	e.publish("a", 1, 2, 8, 1)
	var (
		bp   atomic.Pointer[Broker]
		mu   sync.Mutex
		seen = map[string]int{}
		bad  []string
	)
	r := e.startBroker(func(c *Config) {
		c.appendHook = func(ctx context.Context, ev broker.Event) {
			b := bp.Load()
			if b == nil || (ev.Kind != broker.EvSubmitted && ev.Kind != broker.EvCancelled) {
				return
			}
			free := b.mu.TryLock()
			if free {
				b.mu.Unlock()
			}
			_, deadline := ctx.Deadline()
			mu.Lock()
			defer mu.Unlock()
			seen[ev.Kind]++
			if !free {
				bad = append(bad, ev.Kind+": b.mu held during the append")
			}
			if !deadline {
				bad = append(bad, ev.Kind+": context without a deadline")
			}
		}
	})
	bp.Store(r.b)
	e.waitSites(r.b, 1)
	cl := client.New(connect(t, e.srv), "")
	ctx := context.Background()
	rep, err := cl.Submit(ctx, job(8, 3600, 2), "lock-1")
	if err != nil || rep.Code != "ok" {
		t.Fatalf("submit: %v %+v", err, rep)
	}
	if cr, err := cl.Cancel(ctx, rep.Job); err != nil || cr.Code != "ok" {
		t.Fatalf("cancel: %v %+v", err, cr)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[broker.EvSubmitted] != 1 || seen[broker.EvCancelled] != 1 {
		t.Fatalf("appends seen: %v", seen)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

package daemon

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/wire"
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

// TestCommitPassesDoNotHoldTheLockAcrossAppends: a commit's intent and
// outcome are appended to the job stream with b.mu free, and a status
// request sent while the append is in flight is answered (before, status
// queued behind every commit's JetStream appends); every audit record of
// the commit and of a no-show release is published with b.mu free.
func TestCommitPassesDoNotHoldTheLockAcrossAppends(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	e.publish("alpha", 1, 2, 8, 1)
	var (
		bp   atomic.Pointer[Broker]
		mu   sync.Mutex
		seen = map[string]int{}
		bad  []string
	)
	r := e.startBroker(func(c *Config) {
		c.appendHook = func(ctx context.Context, ev broker.Event) {
			b := bp.Load()
			if b == nil || (ev.Kind != broker.EvIntent && ev.Kind != broker.EvOutcome) {
				return
			}
			free := b.mu.TryLock()
			if free {
				b.mu.Unlock()
			}
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := client.New(connect(t, e.srv), "").Status(sctx, ev.Job, false)
			mu.Lock()
			defer mu.Unlock()
			seen[ev.Kind]++
			if !free {
				bad = append(bad, ev.Kind+": b.mu held during the append")
			}
			if err != nil {
				bad = append(bad, ev.Kind+": status not answered during the append: "+err.Error())
			}
		}
		c.auditHook = func(rec wire.AuditRecord) {
			b := bp.Load()
			if b == nil {
				return
			}
			free := b.mu.TryLock()
			if free {
				b.mu.Unlock()
			}
			mu.Lock()
			defer mu.Unlock()
			seen["audit "+rec.Action]++
			if !free {
				bad = append(bad, "audit "+rec.Action+": b.mu held during the publish")
			}
		}
	})
	bp.Store(r.b)
	e.waitSites(r.b, 1)
	rep := submit(t, r.b, "lock-commit", job(8, 3600, 2))
	if rep.Code != wire.CodeOK {
		t.Fatalf("submit: %+v", rep)
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := status(t, r.b, rep.Job)
	if st.State != wire.JobReserved {
		t.Fatalf("state %s (%s), want reserved", st.State, st.Message)
	}
	e.clock.Add(time.Duration(st.Plan.End-e.clock.Now().Unix()+1) * time.Second) // never started: a no-show
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := status(t, r.b, rep.Job); st.State != wire.JobExpired {
		t.Fatalf("state %s (%s), want expired", st.State, st.Message)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[broker.EvIntent] != 1 || seen[broker.EvOutcome] != 1 || seen["audit no-show"] != 1 || seen["audit commit"] != 1 {
		t.Fatalf("appends seen: %v", seen)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

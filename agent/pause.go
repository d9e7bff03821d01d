package agent

import (
	"context"
	"time"

	"lookahead/wire"
)

// A verb that must wait for the scheduler — a Slurm release whose
// cancelled parts are still leaving the queue ("in use", up to 5 s) — waits
// without the request lock: the envelope's other requests are served
// meanwhile, and only requests naming the same grid job are refused
// (busy) until it goes on. The envelope (serve) gives act a context that
// carries the agent and the job; Wait, called by an adapter with that
// context, lets go of the request lock for the wait and takes it back
// after. Called with any other context (the held check's repair, a test),
// Wait only waits.

// pauseKey carries the pausing request in its context.
type pauseKey struct{}

type pausing struct {
	a   *Agent
	job string
}

// pausable is ctx for a request of job in the envelope (the caller holds
// the request lock).
func (a *Agent) pausable(ctx context.Context, job string) context.Context {
	return context.WithValue(ctx, pauseKey{}, pausing{a: a, job: job})
}

// Wait waits d, or until ctx ends (its error). Inside the request
// envelope it gives up the request lock for the wait (see above).
func Wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	if p, ok := ctx.Value(pauseKey{}).(pausing); ok {
		p.a.paused[p.job]++
		p.a.resMu.Unlock()
		defer func() {
			p.a.resMu.Lock()
			if p.a.paused[p.job]--; p.a.paused[p.job] == 0 {
				delete(p.a.paused, p.job)
			}
		}()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// checkPaused refuses a request for a job whose earlier request waits
// without the request lock (caller holds the lock).
func (a *Agent) checkPaused(h requestHead) *Refusal {
	if a.paused[h.job] == 0 {
		return nil
	}
	return refuse(wire.CodeInternal, "a request for job %s is still being served here (it waits for the scheduler): nothing done, retry", clip(h.job))
}

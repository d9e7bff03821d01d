package agent

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"lookahead/wire"
)

// The request envelope: every request that changes the site — reserve,
// release, dispatch, stop — passes the same steps, in this order, here
// and nowhere else (serve):
//
//  1. decode   the JSON body; a malformed one is invalid.
//  2. check    the request on its own, fully (the verb's Check…): nothing
//     of the site is read, no state changes.
//  3. admit    the broker epoch (epoch.go). Only a valid request may
//     raise the highest epoch the site has seen.
//  4. deadline a request that reached the agent after its sender stopped
//     waiting is answered expired (deadline.go).
//  5. intent   the request is audited before anything runs (verbs that
//     keep an intent record); no audit, nothing done. The record goes
//     out at once, and while it travels to the audit stream the verb
//     may prepare (read the site, decide; change nothing: call.prepare);
//     its acknowledgement is awaited before act.
//  6. act      the verb's own work.
//  7. outcome  the answer is audited, counted and logged. The outcome's
//     record goes out before the answer, and its acknowledgement is
//     awaited after the answer is sent (serve's done): the answer does
//     not wait a round trip to the audit stream.
//
// A refusal at steps 1 to 5 ends the request there: it has changed
// nothing (not even the epoch, unless step 3 admitted it). Requests are
// served one at a time: the request lock (Agent.resMu) is taken in serve,
// before step 1, and held to the end of step 7 — the lock's whole scope
// is serve, but for a verb's waits on the scheduler in step 6 (Wait,
// pause.go), during which only requests for the same job are refused
// (at step 2). The audit steps are auditIntent (5) and auditOutcome (7).

// call is what one verb adds to the envelope: its request, its reply and
// the work between them. The envelope calls the methods in the order of
// the steps above; each method may rely on the earlier ones having run.
type call interface {
	// decode reads the request and sets the reply's header fields that
	// come from it (job, part), even when the request is refused later.
	decode(data []byte) error
	// head is what the envelope reads of the decoded request.
	head() requestHead
	// check validates the decoded request on its own (no I/O, no state).
	check(a *Agent, now time.Time) *Refusal
	// intent is the record audited before acting; nil: the verb keeps
	// none (it audits its commands itself).
	intent(now time.Time) *wire.AuditRecord
	// prepare reads the site and decides before the verb acts, while the
	// intent record travels to the audit stream; it must change nothing
	// (a refusal ends the request there). Most verbs have nothing to
	// prepare (noPrepare).
	prepare(ctx context.Context, a *Agent, x *exchange) *Refusal
	// act does the verb's work, sets the reply and returns the commands
	// it ran, in order.
	act(ctx context.Context, a *Agent, x *exchange) [][]string
	// refuse sets a refusal as the reply.
	refuse(r *Refusal)
	// outcome completes the outcome's audit record from the reply (code,
	// message, the main command, the detail).
	outcome(rec *wire.AuditRecord, data []byte, cmds [][]string)
	// logLine adds the verb's fields to the request's log line.
	logLine(e *zerolog.Event) *zerolog.Event
}

// requestHead is what every request carries for the envelope.
type requestHead struct {
	verb     string
	job      string
	by       string
	identity wire.Identity
	epoch    uint64
	// timeoutMS is how long the sender waits (0: no deadline); sentMS
	// when it sent the request (its clock, 0: unknown) and offsetMS this
	// site's clock minus the sender's (wire.Timing).
	timeoutMS, sentMS, offsetMS int64
}

// withTiming returns h with the request's wire.Timing.
func (h requestHead) withTiming(t wire.Timing) requestHead {
	h.timeoutMS, h.sentMS, h.offsetMS = t.TimeoutMS, t.SentMS, t.ClockOffsetMS
	return h
}

// exchange is one request in flight through the envelope.
type exchange struct {
	// received is when the request reached the agent (real time, before
	// it queued for the request lock); now is the site's clock once the
	// lock was taken.
	received, now time.Time
	// deadline is when the sender stops waiting (zero: none).
	deadline time.Time
	// decoded says the request was decoded (its head is the request's).
	decoded bool
}

// serve runs one request through the envelope; c holds the reply when it
// returns, and the outcome's audit record is out. done waits for that
// record's acknowledgement (logging a failure): the caller answers first,
// then calls done. (A function of the call's type, not of the interface:
// no call is ever held in an interface value.)
func serve[C call](ctx context.Context, a *Agent, data []byte, c C) (done func()) {
	x := &exchange{received: time.Now()} // before the queue: waiting counts against the timeout
	a.resMu.Lock()
	defer a.resMu.Unlock()
	x.now = a.deps.Now()
	cmds, ref := pass(ctx, a, data, c, x)
	if ref != nil {
		c.refuse(ref)
	}
	return finish(ctx, a, data, c, x, cmds)
}

// answered serves c and returns its reply, and done, which waits for the
// outcome's audit record: the service answers, then calls done.
func answered[C call, R any](ctx context.Context, a *Agent, data []byte, c C, reply *R) (R, func()) {
	done := serve(ctx, a, data, c)
	return *reply, done
}

// settled waits (done) and returns reply: the exported verbs return once
// their outcome's audit record is acknowledged.
func settled[R any](reply R, done func()) R {
	done()
	return reply
}

// pass runs steps 1 to 6; a refusal ends it.
func pass[C call](ctx context.Context, a *Agent, data []byte, c C, x *exchange) ([][]string, *Refusal) {
	if err := c.decode(data); err != nil {
		return nil, refuse(wire.CodeInvalid, "malformed %s request: %s", c.head().verb, clip(err.Error()))
	}
	x.decoded = true
	h := c.head()
	if ref := c.check(a, x.now); ref != nil {
		return nil, ref
	}
	if ref := a.checkPaused(h); ref != nil {
		return nil, ref
	}
	if ref := a.admitEpoch(ctx, h); ref != nil {
		return nil, ref
	}
	x.deadline = deadlineOf(h, x.received, time.Now(), a.deps.Now(), a.lag.get())
	if ref := checkDeadline(x.deadline, time.Now()); ref != nil {
		return nil, ref
	}
	var intent auditAck
	if rec := c.intent(x.now); rec != nil {
		intent = a.auditAsync(*rec)
	}
	if ref := c.prepare(ctx, a, x); ref != nil {
		return nil, ref // nothing acted: no need to wait for the intent
	}
	if err := intent.wait(ctx); err != nil {
		return nil, refuse(wire.CodeInternal, "audit unavailable, nothing done: %v", err)
	}
	return c.act(a.pausable(ctx, h.job), a, x), nil
}

// admitEpoch is step 3: a refusal is logged and counted by its reason.
func (a *Agent) admitEpoch(ctx context.Context, h requestHead) *Refusal {
	ref := a.epochs.admit(ctx, h.epoch)
	if ref == nil {
		return nil
	}
	reason := "unverified"
	switch ref.Code {
	case wire.CodeFenced:
		reason = "fenced"
	case wire.CodeInternal:
		reason = "error"
	}
	a.met.EpochRefused(reason)
	a.log.Warn().Str("verb", h.verb).Str("job", clip(h.job)).Uint64("epoch", h.epoch).Str("why", reason).
		Str("reply", ref.Message).Msg("request refused: broker epoch")
	return ref
}

// finish is step 7: the outcome's audit record (sent; done waits for its
// acknowledgement), the request counter and the log line.
func finish[C call](ctx context.Context, a *Agent, data []byte, c C, x *exchange, cmds [][]string) (done func()) {
	h := c.head()
	rec := wire.AuditRecord{Action: h.verb, Time: x.now.Unix()}
	if x.decoded {
		rec.Job, rec.Actor, rec.Identity = clip(h.job), clip(h.by), clipIdentity(h.identity)
	}
	c.outcome(&rec, data, cmds)
	ack := a.auditAsync(rec)
	a.countRequest(h.verb, rec.Code)
	c.logLine(a.log.Info().Str("job", rec.Job).Str("code", rec.Code)).Msg(h.verb)
	return func() { a.auditOutcome(ctx, rec, ack) }
}

// auditOutcome waits for the acknowledgement of a request's outcome
// record; a failure is logged (the answer was sent either way: the
// outcome is the trail's, the intent the guard, and a record lost here
// is no reservation the broker does not know of).
func (a *Agent) auditOutcome(ctx context.Context, rec wire.AuditRecord, ack auditAck) {
	if err := ack.wait(ctx); err != nil {
		a.log.Error().Err(err).Str("job", rec.Job).Msg("audit of " + rec.Action + " result failed")
	}
}

// noPrepare is the prepare step of a verb that decides as it acts.
type noPrepare struct{}

func (noPrepare) prepare(context.Context, *Agent, *exchange) *Refusal { return nil }

// first and last pick the main command of a request's commands for its
// audit record (nil when none ran).
func first(cmds [][]string) []string {
	if len(cmds) == 0 {
		return nil
	}
	return cmds[0]
}

func last(cmds [][]string) []string {
	if len(cmds) == 0 {
		return nil
	}
	return cmds[len(cmds)-1]
}

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"lookahead/forecast"
	"lookahead/wire"
)

// Reserve answers one reserve request (JSON wire.ReserveRequest) through
// the request envelope (envelope.go): checked on its own first (nothing
// runs for an invalid one), its epoch admitted, its deadline checked,
// audited, checked against the processors a fresh snapshot shows (no
// scheduler command runs for processors the site does not have), made
// idempotent (a job that already holds reservations gets them back),
// re-checked on a forecast of that snapshot (stale if it no longer fits)
// — all of which reads only, while the intent record travels — and,
// once the intent is acknowledged, handed to the Reserver. Every outcome
// is audited.
func (a *Agent) Reserve(ctx context.Context, data []byte) wire.ReserveReply {
	return settled(a.reserve(ctx, data))
}

// reserve is Reserve answering before its outcome's audit record is
// acknowledged (answered).
func (a *Agent) reserve(ctx context.Context, data []byte) (wire.ReserveReply, func()) {
	c := &reserveCall{reply: wire.ReserveReply{Type: wire.TypeReserveReply, Site: a.cfg.Site}}
	return answered(ctx, a, data, c, &c.reply)
}

// reserveCall is a reserve request in the envelope.
type reserveCall struct {
	req   wire.ReserveRequest
	reply wire.ReserveReply
	spec  ReserveSpec // the checked request (check), fitted (prepare)
	again bool        // the job holds reservations here already (prepare)
}

func (c *reserveCall) decode(data []byte) error {
	if err := json.Unmarshal(data, &c.req); err != nil {
		return err
	}
	c.reply.Job = clip(c.req.Job)
	return nil
}

func (c *reserveCall) head() requestHead {
	return requestHead{verb: wire.VerbReserve, job: c.req.Job, by: c.req.RequestedBy, identity: c.req.Identity,
		epoch: c.req.Epoch}.withTiming(c.req.Timing)
}

func (c *reserveCall) check(a *Agent, now time.Time) *Refusal {
	spec, ref := CheckReserve(c.req, a.limits(now))
	if ref == nil {
		spec.Identity, ref = LocalIdentity(a.cfg.Dispatch, spec.Identity)
	}
	c.spec = spec
	return ref
}

func (c *reserveCall) intent(now time.Time) *wire.AuditRecord {
	return &wire.AuditRecord{Action: "reserve-request", Time: now.Unix(), Job: c.req.Job,
		Actor: c.req.RequestedBy, Identity: c.req.Identity, Code: wire.CodeOK, Detail: c.req}
}

func (c *reserveCall) refuse(r *Refusal) { c.reply.Code, c.reply.Message = r.Code, r.Message }

func (c *reserveCall) outcome(rec *wire.AuditRecord, data []byte, cmds [][]string) {
	rec.Code, rec.Message, rec.Command = c.reply.Code, c.reply.Message, first(cmds)
	rec.Detail = map[string]any{"request": json.RawMessage(safeJSON(data)), "commands": cmds, "reply": c.reply}
}

func (c *reserveCall) logLine(e *zerolog.Event) *zerolog.Event {
	return e.Str("reply", c.reply.Message)
}

// prepare reads the site and decides, while the intent record travels:
// a fresh snapshot, its capacity, whether the job already holds
// reservations here (a retried request: answered with them, nothing
// made), and the request re-checked on a forecast of the snapshot. It
// changes nothing.
func (c *reserveCall) prepare(ctx context.Context, a *Agent, x *exchange) *Refusal {
	req, reply := c.req, &c.reply
	snap, err := a.snapshot(ctx)
	if err != nil {
		return &Refusal{Code: wire.CodeInternal, Message: err.Error()}
	}
	if ref := CheckCapacity(snap, c.spec.Nodes, req.Procs); ref != nil {
		return ref
	}
	held, err := a.held(ctx, req.Job)
	switch {
	case err != nil:
		return &Refusal{Code: wire.CodeInternal, Message: err.Error()}
	case len(held) > 0:
		if why := sameHold(c.spec, req, held, a.limits(x.now).PastGrace); why != "" {
			return refuse(wire.CodeConflict, "job %s already holds a different reservation here (%s): nothing was done; release it first",
				clip(req.Job), why)
		}
		c.again = true
		reply.Code, reply.Reservations = wire.CodeOK, a.stamp(held)
		reply.Message = "already reserved: retried request, nothing new created"
		return nil
	}
	if ref := a.fit(ctx, snap, x.now, &c.spec, req.Procs); ref != nil {
		reply.Revision = a.Revision()
		return ref
	}
	return nil
}

func (c *reserveCall) act(ctx context.Context, a *Agent, x *exchange) [][]string {
	spec, reply := c.spec, &c.reply
	if c.again {
		return nil // prepared: the reservations it holds
	}
	if ref := checkDeadline(x.deadline, time.Now()); ref != nil { // the checks took long
		c.refuse(ref)
		return nil
	}
	if !x.deadline.IsZero() { // nothing may land after the sender gave up
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, x.deadline)
		defer cancel()
	}
	res, err := a.deps.Reserver.Reserve(ctx, spec)
	if err != nil {
		reply.Code, reply.Message = wire.CodeInternal, err.Error()
		if errors.Is(err, ErrScheduler) {
			reply.Code = wire.CodeSchedulerEr
		}
		if len(res.Commands) > 0 { // the scheduler may have held it a moment (made, then deleted again): a forecast built then must not last
			a.Notify(SourceReservation)
		}
		return res.Commands
	}
	reply.Code, reply.Reservations, reply.Revision = wire.CodeOK, a.stamp(res.Reservations), a.Revision()
	a.remember(spec, reply.Reservations)
	a.Notify(SourceReservation)
	return res.Commands
}

// fit re-checks spec on a forecast of snap (which holds the site's
// reservations in force): it picks the nodes of a site-wide count,
// extends the end by the slack the nodes allow, and fills what the
// Reserver needs to refuse overlaps (node capacity) and to bind the
// reservation (accounts local jobs use). A refusal is stale.
func (a *Agent) fit(ctx context.Context, snap forecast.Snapshot, now time.Time, spec *ReserveSpec, procs int) *Refusal {
	fresh, err := a.forecastOf(ctx, snap, now, a.deps.CheckEngine)
	if err != nil {
		return &Refusal{Code: wire.CodeInternal, Message: err.Error()}
	}
	nodes, ref := Fit(&fresh.forecast, *spec, procs)
	if ref != nil {
		return ref
	}
	spec.Nodes = nodes
	spec.End = SlackEnd(&fresh.forecast, nodes, spec.End, int64(max(a.cfg.Slack, 0)/time.Second))
	spec.Capacity = map[string]int{}
	for _, n := range snap.Nodes {
		if n.Usable() {
			spec.Capacity[n.Name] = n.Procs
		}
	}
	for _, j := range snap.Jobs {
		if j.Account != "" && !slices.Contains(spec.InUse, j.Account) {
			spec.InUse = append(spec.InUse, j.Account)
		}
	}
	return nil
}

// held returns the reservations job already holds, as the scheduler
// reports them.
func (a *Agent) held(ctx context.Context, job string) ([]wire.Reservation, error) {
	all, err := a.deps.Reserver.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []wire.Reservation
	for _, r := range all {
		if r.Job == job {
			out = append(out, r)
		}
	}
	return out, nil
}

// stamp sets this site on reservations.
func (a *Agent) stamp(rs []wire.Reservation) []wire.Reservation {
	for i := range rs {
		rs[i].Site = a.cfg.Site
	}
	return rs
}

func (a *Agent) limits(now time.Time) Limits {
	return Limits{Site: a.cfg.Site, Now: now.Unix(),
		MaxDuration: int64(a.cfg.MaxDuration.Seconds()), PastGrace: int64(a.cfg.PastGrace.Seconds())}
}

// Release answers one release request (JSON wire.ReleaseRequest) through
// the request envelope. Idempotent: releasing what does not exist is
// CodeOK with a note.
func (a *Agent) Release(ctx context.Context, data []byte) wire.ReleaseReply {
	return settled(a.release(ctx, data))
}

// release is Release answering before its outcome's audit record is
// acknowledged (answered).
func (a *Agent) release(ctx context.Context, data []byte) (wire.ReleaseReply, func()) {
	c := &releaseCall{reply: wire.ReleaseReply{Type: wire.TypeReleaseReply, Site: a.cfg.Site}}
	return answered(ctx, a, data, c, &c.reply)
}

// releaseCall is a release request in the envelope.
type releaseCall struct {
	noPrepare
	req   wire.ReleaseRequest
	reply wire.ReleaseReply
}

func (c *releaseCall) decode(data []byte) error {
	if err := json.Unmarshal(data, &c.req); err != nil {
		return err
	}
	c.reply.Job = clip(c.req.Job)
	return nil
}

func (c *releaseCall) head() requestHead {
	return requestHead{verb: wire.VerbRelease, job: c.req.Job, by: c.req.RequestedBy, epoch: c.req.Epoch}.withTiming(c.req.Timing)
}

func (c *releaseCall) check(a *Agent, _ time.Time) *Refusal { return CheckRelease(c.req, a.cfg.Site) }

func (c *releaseCall) intent(now time.Time) *wire.AuditRecord {
	return &wire.AuditRecord{Action: "release-request", Time: now.Unix(), Job: c.req.Job,
		Actor: c.req.RequestedBy, Code: wire.CodeOK, Message: c.req.Reason}
}

func (c *releaseCall) refuse(r *Refusal) { c.reply.Code, c.reply.Message = r.Code, r.Message }

func (c *releaseCall) outcome(rec *wire.AuditRecord, data []byte, cmds [][]string) {
	rec.Code, rec.Message, rec.Command = c.reply.Code, c.reply.Message, first(cmds)
	rec.Detail = map[string]any{"request": json.RawMessage(safeJSON(data)), "commands": cmds, "reply": c.reply}
}

func (c *releaseCall) logLine(e *zerolog.Event) *zerolog.Event {
	return e.Strs("released", c.reply.Released)
}

func (c *releaseCall) act(ctx context.Context, a *Agent, _ *exchange) [][]string {
	req, reply := c.req, &c.reply
	res, err := a.deps.Reserver.Release(ctx, req.Job)
	if err != nil {
		reply.Code, reply.Message = wire.CodeInternal, err.Error()
		switch {
		case errors.Is(err, ErrNotOurs):
			reply.Code = wire.CodeForbidden
		case errors.Is(err, ErrScheduler):
			reply.Code = wire.CodeSchedulerEr
		}
		return res.Commands
	}
	reply.Code, reply.Released = wire.CodeOK, res.IDs
	a.forget(req.Job)
	if len(res.IDs) == 0 {
		reply.Note = "nothing to release: job " + req.Job + " holds no reservation here"
	} else {
		a.Notify(SourceReservation)
	}
	return res.Commands
}

func clipIdentity(id wire.Identity) wire.Identity {
	return wire.Identity{User: clip(id.User), Group: clip(id.Group), Account: clip(id.Account)}
}

// safeJSON keeps a request in the audit record when it is valid JSON of a
// sane size, and a placeholder otherwise.
func safeJSON(data []byte) []byte {
	if len(data) > 64<<10 || !json.Valid(data) {
		b, _ := json.Marshal("unparsable request of " + itoa(len(data)) + " bytes")
		return b
	}
	return data
}

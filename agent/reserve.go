package agent

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"lookahead/forecast"
	"lookahead/wire"
)

// Reserve answers one reserve request (JSON wire.ReserveRequest): checked
// on its own first (nothing runs for an invalid one), audited, checked
// against the processors a fresh snapshot shows (no scheduler command runs
// for processors the site does not have), made idempotent (a job that
// already holds reservations gets them back), re-checked on a forecast of
// that snapshot (stale if it no longer fits), and only then handed to the
// Reserver. Every outcome is audited.
// Requests are served one at a time.
func (a *Agent) Reserve(ctx context.Context, data []byte) wire.ReserveReply {
	received := time.Now() // before the queue: waiting counts against the timeout
	a.resMu.Lock()
	defer a.resMu.Unlock()
	now := a.deps.Now()
	var req wire.ReserveRequest
	reply := wire.ReserveReply{Type: wire.TypeReserveReply, Site: a.cfg.Site}
	rec := wire.AuditRecord{Action: wire.VerbReserve, Time: now.Unix()}
	var cmds [][]string
	if err := json.Unmarshal(data, &req); err != nil {
		reply.Code, reply.Message = wire.CodeInvalid, "malformed reserve request: "+clip(err.Error())
	} else {
		reply.Job = clip(req.Job)
		rec.Job, rec.Actor, rec.Identity = clip(req.Job), clip(req.RequestedBy), clipIdentity(req.Identity)
		cmds = a.reserve(ctx, req, now, deadlineOf(req, received), &reply)
	}
	rec.Code, rec.Message = reply.Code, reply.Message
	if len(cmds) > 0 {
		rec.Command = cmds[0]
	}
	rec.Detail = map[string]any{"request": json.RawMessage(safeJSON(data)), "commands": cmds, "reply": reply}
	if err := a.audit(ctx, rec); err != nil {
		a.log.Error().Err(err).Str("job", rec.Job).Msg("audit of reserve result failed")
	}
	a.countRequest(wire.VerbReserve, reply.Code)
	a.log.Info().Str("job", rec.Job).Str("code", reply.Code).Str("reply", reply.Message).Msg("reserve")
	return reply
}

func (a *Agent) reserve(ctx context.Context, req wire.ReserveRequest, now, deadline time.Time, reply *wire.ReserveReply) [][]string {
	if ref := a.epochs.admit(req.Epoch); ref != nil {
		reply.Code, reply.Message = ref.Code, ref.Message
		return nil
	}
	spec, ref := CheckReserve(req, a.limits(now))
	if ref == nil {
		spec.Identity, ref = LocalIdentity(a.cfg.Dispatch, spec.Identity)
	}
	if ref == nil {
		ref = checkDeadline(deadline, time.Now())
	}
	if ref != nil {
		reply.Code, reply.Message = ref.Code, ref.Message
		return nil
	}
	if err := a.audit(ctx, wire.AuditRecord{Action: "reserve-request", Time: now.Unix(), Job: req.Job,
		Actor: req.RequestedBy, Identity: req.Identity, Code: wire.CodeOK, Detail: req}); err != nil {
		reply.Code, reply.Message = wire.CodeInternal, "audit unavailable, nothing done: "+err.Error()
		return nil
	}
	snap, err := a.snapshot(ctx)
	if err != nil {
		reply.Code, reply.Message = wire.CodeInternal, err.Error()
		return nil
	}
	if ref := CheckCapacity(snap, spec.Nodes, req.Procs); ref != nil {
		reply.Code, reply.Message = ref.Code, ref.Message
		return nil
	}
	if held, err := a.held(ctx, req.Job); err != nil || len(held) > 0 {
		reply.Code, reply.Reservations = wire.CodeOK, a.stamp(held)
		reply.Message = "already reserved: retried request, nothing new created"
		if err != nil {
			reply.Code, reply.Message = wire.CodeInternal, err.Error()
		}
		return nil
	}
	if ref := a.fit(ctx, snap, now, &spec, req.Procs); ref != nil {
		reply.Code, reply.Message, reply.Revision = ref.Code, ref.Message, a.Revision()
		return nil
	}
	if ref := checkDeadline(deadline, time.Now()); ref != nil { // the checks took long
		reply.Code, reply.Message = ref.Code, ref.Message
		return nil
	}
	if !deadline.IsZero() { // nothing may land after the sender gave up
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	res, err := a.deps.Reserver.Reserve(ctx, spec)
	if err != nil {
		reply.Code, reply.Message = wire.CodeInternal, err.Error()
		if errors.Is(err, ErrScheduler) {
			reply.Code = wire.CodeSchedulerEr
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

// deadlineOf is when the sender of req stops waiting, on this host's
// monotonic clock: TimeoutMS after the request was received. Zero when the
// request sets no timeout. DeadlineMS (an older broker's wall-clock
// instant) is not used: it would compare two hosts' clocks.
func deadlineOf(req wire.ReserveRequest, received time.Time) time.Time {
	if req.TimeoutMS <= 0 {
		return time.Time{}
	}
	return received.Add(time.Duration(req.TimeoutMS) * time.Millisecond)
}

// checkDeadline answers expired once the sender has stopped waiting for
// the answer (deadline passed; zero means none): reserving now could land
// after the sender released the job everywhere.
func checkDeadline(deadline, now time.Time) *Refusal {
	if !deadline.IsZero() && !now.Before(deadline) {
		return refuse(wire.CodeExpired, "request expired: it waited here %s past its timeout; the sender no longer waits for it, nothing was done",
			now.Sub(deadline).Round(time.Millisecond))
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

// Release answers one release request (JSON wire.ReleaseRequest).
// Idempotent: releasing what does not exist is CodeOK with a note.
func (a *Agent) Release(ctx context.Context, data []byte) wire.ReleaseReply {
	a.resMu.Lock()
	defer a.resMu.Unlock()
	now := a.deps.Now()
	var req wire.ReleaseRequest
	reply := wire.ReleaseReply{Type: wire.TypeReleaseReply, Site: a.cfg.Site}
	rec := wire.AuditRecord{Action: wire.VerbRelease, Time: now.Unix()}
	var cmds [][]string
	if err := json.Unmarshal(data, &req); err != nil {
		reply.Code, reply.Message = wire.CodeInvalid, "malformed release request: "+clip(err.Error())
	} else {
		reply.Job = clip(req.Job)
		rec.Job, rec.Actor = clip(req.Job), clip(req.RequestedBy)
		cmds = a.release(ctx, req, now, &reply)
	}
	rec.Code, rec.Message = reply.Code, reply.Message
	if len(cmds) > 0 {
		rec.Command = cmds[0]
	}
	rec.Detail = map[string]any{"request": json.RawMessage(safeJSON(data)), "commands": cmds, "reply": reply}
	if err := a.audit(ctx, rec); err != nil {
		a.log.Error().Err(err).Str("job", rec.Job).Msg("audit of release result failed")
	}
	a.countRequest(wire.VerbRelease, reply.Code)
	a.log.Info().Str("job", rec.Job).Str("code", reply.Code).Strs("released", reply.Released).Msg("release")
	return reply
}

func (a *Agent) release(ctx context.Context, req wire.ReleaseRequest, now time.Time, reply *wire.ReleaseReply) [][]string {
	ref := a.epochs.admit(req.Epoch)
	if ref == nil {
		ref = CheckRelease(req, a.cfg.Site)
	}
	if ref != nil {
		reply.Code, reply.Message = ref.Code, ref.Message
		return nil
	}
	if err := a.audit(ctx, wire.AuditRecord{Action: "release-request", Time: now.Unix(), Job: req.Job,
		Actor: req.RequestedBy, Code: wire.CodeOK, Message: req.Reason}); err != nil {
		reply.Code, reply.Message = wire.CodeInternal, "audit unavailable, nothing done: "+err.Error()
		return nil
	}
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

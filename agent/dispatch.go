package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"lookahead/torque"
	"lookahead/wire"
)

// Executor runs grid jobs' parts where the resource lives: torque.Batch
// (qsub -P as a Torque manager, qstat -f -x, qdel) or a simulated site.
// Every method returns the argument vector it ran, for the audit.
//
// Submit submits one part (the script on qsub's standard input) and
// returns its local job id; a refusal by the batch system is an error
// (a *torque.CommandError for Torque). Jobs lists the batch system's jobs,
// completed ones included for as long as it keeps them. Delete deletes one
// job; a job already gone is an error for which torque.Gone is true.
type Executor interface {
	Submit(ctx context.Context, spec torque.QsubSpec) (id string, argv []string, err error)
	Jobs(ctx context.Context) ([]torque.BatchJob, []string, error)
	Delete(ctx context.Context, id string) ([]string, error)
}

var _ Executor = (*torque.Batch)(nil)

// SourceDispatch labels forecasts triggered by a dispatched part.
const SourceDispatch = "dispatch"

// Dispatch answers one dispatch request (JSON wire.DispatchRequest)
// through the request envelope (envelope.go): checked on its own, its
// epoch admitted, audited, the grid user mapped to a local account (never
// root or a system user), the job's reservation read from the scheduler,
// made idempotent (a part already submitted under its name la.<job>.<part>
// is returned, not submitted again), planned (nodes of the reservation,
// walltime, binding options, output paths, LOOKAHEAD_* variables) and
// submitted through the Executor. Every outcome is audited with the exact
// commands run. Requests are served one at a time, with reserve and
// release.
func (a *Agent) Dispatch(ctx context.Context, data []byte) wire.DispatchReply {
	return settled(a.dispatch(ctx, data))
}

// dispatch is Dispatch answering before its outcome's audit record is
// acknowledged (answered).
func (a *Agent) dispatch(ctx context.Context, data []byte) (wire.DispatchReply, func()) {
	c := &dispatchCall{reply: wire.DispatchReply{Type: wire.TypeDispatchReply, Site: a.cfg.Site}}
	return answered(ctx, a, data, c, &c.reply)
}

// dispatchCall is a dispatch request in the envelope.
type dispatchCall struct {
	noPrepare
	req   wire.DispatchRequest
	reply wire.DispatchReply
}

func (c *dispatchCall) decode(data []byte) error {
	if err := json.Unmarshal(data, &c.req); err != nil {
		return err
	}
	c.reply.Job, c.reply.Part = clip(c.req.Job), c.req.Part
	return nil
}

func (c *dispatchCall) head() requestHead {
	return requestHead{verb: wire.VerbDispatch, job: c.req.Job, by: c.req.RequestedBy,
		identity: wire.Identity{User: c.req.User, Account: c.req.Account}, epoch: c.req.Epoch}.withTiming(c.req.Timing)
}

func (c *dispatchCall) check(a *Agent, _ time.Time) *Refusal {
	if a.deps.Executor == nil {
		return refuse(wire.CodeForbidden, "this site does not dispatch grid jobs' parts (no executor configured)")
	}
	return CheckDispatch(c.req, a.cfg.Site)
}

func (c *dispatchCall) intent(now time.Time) *wire.AuditRecord {
	return &wire.AuditRecord{Action: "dispatch-request", Time: now.Unix(), Job: c.req.Job, Actor: c.req.RequestedBy,
		Identity: wire.Identity{User: c.req.User, Account: c.req.Account}, Code: wire.CodeOK,
		Detail: dispatchSummary(c.req, nil)}
}

func (c *dispatchCall) refuse(r *Refusal) { c.reply.Code, c.reply.Message = r.Code, r.Message }

func (c *dispatchCall) outcome(rec *wire.AuditRecord, data []byte, cmds [][]string) {
	rec.Code, rec.Message, rec.Command = c.reply.Code, c.reply.Message, last(cmds)
	rec.Detail = map[string]any{"request": dispatchSummary(c.req, data), "commands": cmds, "reply": c.reply}
}

func (c *dispatchCall) logLine(e *zerolog.Event) *zerolog.Event {
	return e.Int("part", c.req.Part).Str("local_id", c.reply.LocalID).Str("local_user", c.reply.LocalUser).Str("reply", c.reply.Message)
}

// dispatchSummary is the request as the audit keeps it: everything but
// the script, which is named by its size.
func dispatchSummary(req wire.DispatchRequest, data []byte) any {
	if req.Type == "" {
		return json.RawMessage(safeJSON(data))
	}
	s := req
	s.Script = nil
	return map[string]any{"request": s, "script_bytes": len(req.Script)}
}

func (c *dispatchCall) act(ctx context.Context, a *Agent, x *exchange) [][]string {
	req, reply := c.req, &c.reply
	u, ref := MapUser(a.cfg.Dispatch, req.User, a.deps.Users)
	if ref != nil {
		c.refuse(ref)
		return nil
	}
	reply.LocalUser = u.Name
	var cmds [][]string
	if done, argv := a.findPart(ctx, req, u, reply); done {
		return append(cmds, argv)
	} else if argv != nil {
		cmds = append(cmds, argv)
	}
	return append(cmds, a.submitPart(ctx, req, u, x.now.Unix(), reply)...)
}

// findPart looks for the part among the batch system's jobs (a retried
// dispatch); done is true when the reply is complete (found, or the
// lookup failed).
func (a *Agent) findPart(ctx context.Context, req wire.DispatchRequest, u LocalUser, reply *wire.DispatchReply) (bool, []string) {
	jobs, argv, err := a.deps.Executor.Jobs(ctx)
	if err != nil {
		reply.Code, reply.Message = wire.CodeInternal, err.Error()
		return true, argv
	}
	name := wire.PartName(req.Job, req.Part)
	for _, j := range jobs {
		if j.Name == name && j.User == u.Name {
			a.recordDispatched(j.ID, req.Job)
			reply.Code, reply.LocalID, reply.Output, reply.Error, reply.Duplicate = wire.CodeOK, j.ID, j.Output, j.Error, true
			reply.Message = fmt.Sprintf("already submitted as %s (%s): retried request, nothing new submitted", j.ID, j.State)
			return true, argv
		}
	}
	return false, argv
}

func (a *Agent) submitPart(ctx context.Context, req wire.DispatchRequest, u LocalUser, now int64, reply *wire.DispatchReply) [][]string {
	res, found, err := a.reservationOf(ctx, req.Job)
	switch {
	case err != nil:
		reply.Code, reply.Message = wire.CodeInternal, err.Error()
		return nil
	case !found:
		reply.Code, reply.Message = wire.CodeNotFound, fmt.Sprintf("job %s holds no reservation here: nothing to run part %d in", req.Job, req.Part)
		return nil
	}
	plan, ref := PlanPart(req, res, u, a.cfg.Dispatch, now)
	if ref != nil {
		reply.Code, reply.Message = ref.Code, ref.Message
		return nil
	}
	id, argv, err := a.deps.Executor.Submit(ctx, plan.Spec)
	cmds := [][]string{argv}
	if err != nil {
		reply.Code, reply.Message = wire.CodeInternal, err.Error()
		var ce *torque.CommandError
		if errors.As(err, &ce) {
			reply.Code = wire.CodeSchedulerEr
		}
		return cmds
	}
	a.recordDispatched(id, req.Job)
	reply.Code, reply.LocalID, reply.Output, reply.Error = wire.CodeOK, id, plan.Spec.Output, plan.Spec.Error
	reply.Message = strings.TrimSpace("submitted into reservation " + res.ID + ". " + plan.Cut)
	reply.Message += a.outputNote(u.Home, id)
	a.Notify(SourceDispatch)
	return cmds
}

// reservationOf is the job's reservation as the scheduler reports it.
func (a *Agent) reservationOf(ctx context.Context, job string) (wire.Reservation, bool, error) {
	held, err := a.held(ctx, job)
	if err != nil || len(held) == 0 {
		return wire.Reservation{}, false, err
	}
	return held[0], true, nil
}

// Stop answers one stop request (JSON wire.StopRequest) through the
// request envelope: every part of the job that the batch system still
// runs or queues is deleted (qdel), each command audited. Idempotent:
// nothing left to delete is CodeOK with a note.
func (a *Agent) Stop(ctx context.Context, data []byte) wire.StopReply {
	return settled(a.stop(ctx, data))
}

// stop is Stop answering before its outcome's audit record is
// acknowledged (answered).
func (a *Agent) stop(ctx context.Context, data []byte) (wire.StopReply, func()) {
	c := &stopCall{reply: wire.StopReply{Type: wire.TypeStopReply, Site: a.cfg.Site}}
	return answered(ctx, a, data, c, &c.reply)
}

// stopCall is a stop request in the envelope. It keeps no intent record:
// each qdel is audited as it runs.
type stopCall struct {
	noPrepare
	req   wire.StopRequest
	reply wire.StopReply
}

func (c *stopCall) decode(data []byte) error {
	if err := json.Unmarshal(data, &c.req); err != nil {
		return err
	}
	c.reply.Job = clip(c.req.Job)
	return nil
}

func (c *stopCall) head() requestHead {
	return requestHead{verb: wire.VerbStop, job: c.req.Job, by: c.req.RequestedBy, epoch: c.req.Epoch}.withTiming(c.req.Timing)
}

func (c *stopCall) check(a *Agent, _ time.Time) *Refusal { return CheckStop(c.req, a.cfg.Site) }

func (c *stopCall) intent(time.Time) *wire.AuditRecord { return nil }

func (c *stopCall) refuse(r *Refusal) { c.reply.Code, c.reply.Message = r.Code, r.Message }

func (c *stopCall) outcome(rec *wire.AuditRecord, data []byte, cmds [][]string) {
	rec.Code, rec.Message, rec.Command = c.reply.Code, clip(c.req.Reason), last(cmds)
	if c.reply.Message != "" {
		rec.Message = c.reply.Message
	}
	rec.Detail = map[string]any{"request": json.RawMessage(safeJSON(data)), "commands": cmds, "reply": c.reply}
}

func (c *stopCall) logLine(e *zerolog.Event) *zerolog.Event {
	return e.Strs("deleted", c.reply.Deleted).Str("why", c.req.Reason)
}

func (c *stopCall) act(ctx context.Context, a *Agent, _ *exchange) [][]string {
	req, reply := c.req, &c.reply
	if a.deps.Executor == nil {
		reply.Code, reply.Note = wire.CodeOK, "this site does not dispatch parts: nothing to delete"
		return nil
	}
	jobs, argv, err := a.deps.Executor.Jobs(ctx)
	cmds := [][]string{argv}
	if err != nil {
		reply.Code, reply.Message = wire.CodeInternal, err.Error()
		return cmds
	}
	reply.Code = wire.CodeOK
	a.loadPartState()
	known := a.parts.HasParts(req.Job)
	for _, j := range jobs {
		if job, _, ok := wire.ParsePartName(j.Name); !ok || job != req.Job || j.Done() {
			continue
		}
		if pj, mine := a.parts.PartOf(j.ID); known && (!mine || pj != req.Job) {
			continue // named like a part, not one this agent submitted
		}
		argv, err := a.deps.Executor.Delete(ctx, j.ID)
		cmds = append(cmds, argv)
		a.auditQdel(ctx, req, j, argv, err)
		switch {
		case err == nil:
			reply.Deleted = append(reply.Deleted, j.ID)
		case !torque.Gone(err):
			reply.Code, reply.Message = wire.CodeInternal, err.Error()
		}
	}
	if len(reply.Deleted) == 0 && reply.Code == wire.CodeOK {
		reply.Note = "nothing to delete: no part of job " + req.Job + " is queued or running here"
	}
	if len(reply.Deleted) > 0 {
		a.Notify(SourceDispatch)
	}
	return cmds
}

// auditQdel records one qdel of a part with its exact argument vector.
func (a *Agent) auditQdel(ctx context.Context, req wire.StopRequest, j torque.BatchJob, argv []string, err error) {
	rec := wire.AuditRecord{Action: "qdel", Job: req.Job, Actor: req.RequestedBy, Command: argv, Code: wire.CodeOK,
		Message: j.ID + " (" + j.Name + ", " + j.State + "): " + req.Reason}
	if err != nil {
		rec.Code, rec.Message = wire.CodeOK, err.Error()
		if !torque.Gone(err) {
			rec.Code = wire.CodeInternal
		}
	}
	if aerr := a.audit(ctx, rec); aerr != nil {
		a.log.Error().Err(aerr).Str("job", req.Job).Msg("audit of qdel failed")
	}
}

// isDir reports whether path is a directory.
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

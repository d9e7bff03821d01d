package broker

import (
	"fmt"
	"math"
	"slices"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
	"lookahead/wire"
)

// Policy is what the broker checks a submission against.
type Policy struct {
	// MaxWalltime bounds a job's walltime in seconds; 0 means no bound.
	MaxWalltime int64
	Budgets     Budgets
	// Identities maps a NATS user to the grid users and accounts it may
	// submit and cancel for ("*" allows any name). The entry "*" applies
	// to every NATS user not listed, including an unknown one. A nil map
	// allows everything (a single-user or demo setup).
	Identities map[string]Allowed
	// Operators are the NATS users whose status shows every job; others
	// see only the jobs they submitted or may act for.
	Operators []string
	// MaxActivePerUser and MaxActivePerAccount bound the jobs one grid
	// user, one account, may have waiting, committing, reserved or running
	// (0: no bound). A submission over a bound is refused as queue-full.
	MaxActivePerUser    int
	MaxActivePerAccount int
	// Grid is what the sites known at the submission hold (see Capacity):
	// a job they could never hold is refused. The daemon sets it for each
	// submission; nil checks nothing.
	Grid Capacity
	// Criterion is the planner's criterion for jobs that omit one ("":
	// forecast.DefaultCriterion); status shows each job the one it is
	// planned with.
	Criterion string
}

// Allowed lists the grid users and accounts one NATS user may act for.
type Allowed struct {
	Users    []string `mapstructure:"users" json:"users"`
	Accounts []string `mapstructure:"accounts" json:"accounts"`
}

func (a Allowed) user(u string) bool    { return allows(a.Users, u) }
func (a Allowed) account(x string) bool { return x == "" || allows(a.Accounts, x) }

func allows(list []string, name string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, name)
}

// Admit decides a submission from actor (the NATS user, "" when unknown) at
// now. An accepted job comes back as the event to append and the reply to
// send; a refusal or a duplicate as a reply only (the event's Kind is
// empty). The job gets its id (the request's, or the next "gN") and
// Submitted = now.
func Admit(s *State, p Policy, actor string, req wire.SubmitRequest, now int64) (Event, wire.SubmitReply) {
	reply := wire.SubmitReply{Type: wire.TypeSubmitReply}
	if msg := checkToken("request_id", req.RequestID, maxNameBytes); msg != "" {
		reply.Code, reply.Message = wire.CodeInvalid, msg
		return Event{}, reply
	}
	if j := s.ByRequest(req.RequestID); j != nil {
		reply.Code, reply.Job, reply.Duplicate, reply.WorstCost = wire.CodeOK, j.Req.ID, true, j.WorstCost
		reply.Message = "already submitted as " + j.Req.ID
		return Event{}, reply
	}
	job := req.Job
	if len(req.Script) > wire.MaxScriptBytes {
		reply.Code, reply.Message = wire.CodeInvalid, fmt.Sprintf("script of %d bytes exceeds the limit of %d", len(req.Script), wire.MaxScriptBytes)
		return Event{}, reply
	}
	if code, msg := checkRequest(s, p, actor, &job, req.Script != nil); code != "" {
		reply.Code, reply.Message = code, msg
		return Event{}, reply
	}
	if job.ID == "" {
		job.ID = s.NextID()
	}
	job.Submitted = now
	reply.Code, reply.Job, reply.WorstCost = wire.CodeOK, job.ID, WorstCost(job)
	return Event{Kind: EvSubmitted, Time: now, Job: job.ID, Request: &job, RequestID: req.RequestID, Actor: actor,
		Script: req.Script}, reply
}

func checkRequest(s *State, p Policy, actor string, job *forecast.JobRequest, scripted bool) (code, msg string) {
	if msg := checkActor(actor); msg != "" {
		return wire.CodeInvalid, msg
	}
	if msg := checkSizes(job); msg != "" {
		return wire.CodeInvalid, msg
	}
	if err := job.Validate(); err != nil {
		return wire.CodeInvalid, err.Error()
	}
	if w := WorstCost(*job); math.IsInf(w, 0) || math.IsNaN(w) {
		return wire.CodeInvalid, fmt.Sprintf("max_price %g × %d procs × %s is not a finite number of credits", job.MaxPrice, job.Procs, durfmt.Seconds(job.Walltime))
	}
	if job.ID != "" && s.Job(job.ID) != nil {
		return wire.CodeInvalid, fmt.Sprintf("job id %q is taken; omit the id to get one", job.ID)
	}
	if p.MaxWalltime > 0 && job.Walltime > p.MaxWalltime {
		return wire.CodeTooLong, fmt.Sprintf("walltime %s exceeds the broker's maximum %s", durfmt.Seconds(job.Walltime), durfmt.Seconds(p.MaxWalltime))
	}
	if code, msg := p.Grid.check(*job, scripted); code != "" {
		return code, msg
	}
	if msg := checkIdentity(p, actor, job); msg != "" {
		return wire.CodeForbidden, msg
	}
	if msg := checkActive(s, p, job); msg != "" {
		return wire.CodeQueueFull, msg
	}
	if msg := s.CheckBudget(p.Budgets, *job); msg != "" {
		return wire.CodeOverBudget, "over budget: " + msg
	}
	return "", ""
}

// checkIdentity fills in a missing user (the actor's only allowed user, or
// the actor's own name) and checks the job's user and account are allowed.
func checkIdentity(p Policy, actor string, job *forecast.JobRequest) string {
	if p.Identities == nil {
		if job.User == "" && forecast.IsPlainName(actor) {
			job.User = actor
		}
		return ""
	}
	allowed, ok := p.identity(actor)
	if !ok {
		return fmt.Sprintf("NATS user %q may not submit grid jobs", actor)
	}
	if job.User == "" && len(allowed.Users) == 1 && allowed.Users[0] != "*" {
		job.User = allowed.Users[0]
	}
	if job.User == "" {
		return fmt.Sprintf("job names no user and NATS user %q may act for several", actor)
	}
	if !allowed.user(job.User) {
		return fmt.Sprintf("NATS user %q may not submit for grid user %q", actor, job.User)
	}
	if !allowed.account(job.Account) {
		return fmt.Sprintf("NATS user %q may not submit for account %q", actor, job.Account)
	}
	return ""
}

// DecideCancel decides a cancel of job id by actor at now: the event to
// append (Kind empty when refused) and the reply. A reserved job's sites
// owe a release; a job being committed must be cancelled after the commit.
func DecideCancel(s *State, p Policy, actor, id string, now int64) (Event, wire.CancelReply) {
	reply := wire.CancelReply{Type: wire.TypeCancelReply, Job: id}
	j := s.Job(id)
	switch {
	case j == nil:
		reply.Code, reply.Message = wire.CodeNotFound, fmt.Sprintf("no job %q", id)
		return Event{}, reply
	case !mayAct(p, actor, j):
		reply.Code, reply.Message = wire.CodeForbidden, fmt.Sprintf("NATS user %q may not cancel job %s of user %q", actor, id, j.Req.User)
		return Event{}, reply
	case j.State == wire.JobCommitting:
		reply.Code, reply.Message, reply.State = wire.CodeInvalid, "a commit is in progress; retry in a few seconds", j.State
		return Event{}, reply
	case !j.Active() || (j.State == wire.JobRunning && !j.Dispatched()):
		reply.Code, reply.Message, reply.State = wire.CodeInvalid, fmt.Sprintf("job %s is %s and cannot be cancelled", id, j.State), j.State
		return Event{}, reply
	}
	e := Event{Kind: EvCancelled, Time: now, Job: id, Actor: actor, Message: "cancelled by " + actorName(actor)}
	if j.State == wire.JobReserved {
		e.Release = allocSites(j)
	}
	if j.Dispatched() {
		cancelDispatched(j, &e)
	}
	reply.Code, reply.State = wire.CodeOK, wire.JobCancelled
	switch {
	case len(e.Stop) > 0:
		reply.Message = fmt.Sprintf("parts on %v are being deleted and reservations on %v released; charged %.2f of %.2f credits",
			e.Stop, e.Release, e.Cost, j.Cost)
	case len(e.Release) > 0:
		reply.Message = fmt.Sprintf("reservations on %v are being released; %.2f credits refunded", e.Release, j.Cost)
	}
	return e, reply
}

func mayAct(p Policy, actor string, j *Job) bool {
	if p.Identities == nil || actor == j.Actor {
		return true
	}
	allowed, ok := p.identity(actor)
	return ok && allowed.user(j.Req.User)
}

func (p Policy) identity(actor string) (Allowed, bool) {
	if a, ok := p.Identities[actor]; ok && actor != "" {
		return a, true
	}
	a, ok := p.Identities["*"]
	return a, ok
}

// actorName is how a NATS user shows in messages: the anonymous user of
// a server without authentication has the empty name.
func actorName(actor string) string {
	if actor == "" {
		return "the anonymous NATS user"
	}
	return actor
}

package agent

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"lookahead/forecast"
	"lookahead/wire"
)

// A grid reservation admits every job of its user that presents its
// binding account (docs/maui.md, "What binding cannot do"), so the grid
// user's own job charged to that account can start in it and take the
// part's processors: seen live (issue 35), such a job started 14 s before
// the reservation on processors not yet reserved and pushed another grid
// job's part 96 s late. What the agent does about a job that a grid
// reservation admits but that is not the job's part (a foreign job) is
// the admin's choice (reservations.foreign_jobs):
//
//   - ForeignHold: at every build, a queued one gets an operator hold
//     (qhold -h o: Maui leaves it alone, and only an operator can release
//     it), audited (foreign-hold); the agent releases the hold (qrls -h o,
//     audit foreign-release) once the grid job holds no reservation here.
//     A job Maui starts before the agent's next build cannot be held:
//     it is handled as under ForeignGrace.
//   - ForeignGrace: nothing is held.
//
// Under both, a running foreign job is reported (audit foreign-job, job
// event "foreign") with when it leaves at the latest (its start plus its
// walltime limit): the broker counts the part's start grace from then.

// Foreign job policies.
const (
	ForeignHold  = "hold"
	ForeignGrace = "grace"
)

// Holder puts and releases operator holds on local jobs (torque.Batch:
// qhold -h o, qrls -h o); each call returns the argument vector it ran.
type Holder interface {
	Hold(ctx context.Context, id string) ([]string, error)
	Unhold(ctx context.Context, id string) ([]string, error)
}

// foreignHold is a local job the agent holds because a grid job's
// reservation would admit it.
type foreignHold struct {
	Job         string `json:"job"`
	Reservation string `json:"reservation"`
	Since       int64  `json:"since"`
}

// admits reports whether reservation r lets local job j in: j runs as
// r's user and is charged to r's binding account (Maui's ACL).
func admits(r wire.Reservation, j forecast.LocalJob) bool {
	bind := BindOf(r.Submit)
	return bind != "" && j.Account == bind && j.User == r.Identity.User
}

// queuedForeign lists the queued jobs of jobs that a reservation of res
// admits and that are not its grid job's part (the job this agent
// dispatched, or a hand-submitted part named la.<job>.<N> of a job
// without dispatched parts), in job id order. Pure.
func queuedForeign(jobs []forecast.LocalJob, res []wire.Reservation, parts Dispatched) []ForeignJob {
	var out []ForeignJob
	for _, j := range jobs {
		if j.State != forecast.JobQueued {
			continue
		}
		for _, r := range res {
			if !admits(r, j) || isPart(j, r.Job, parts) {
				continue
			}
			out = append(out, ForeignJob{Job: r.Job, Reservation: r.ID, LocalID: j.ID, User: j.User, Account: j.Account, Name: j.Name})
			break
		}
	}
	slices.SortFunc(out, func(a, b ForeignJob) int { return strings.Compare(a.LocalID, b.LocalID) })
	return out
}

// isPart reports whether local job j is grid job job's part.
func isPart(j forecast.LocalJob, job string, parts Dispatched) bool {
	if parts != nil {
		if _, mine := parts.PartOf(j.ID); mine {
			return true
		}
	}
	return IsHandPart(j, job) && (parts == nil || !parts.HasParts(job))
}

// toUnhold lists the held jobs whose hold is to be released now, in id
// order: their grid job holds no reservation in res any more. gone lists
// those that are neither held nor queued in the snapshot (deleted, or
// running: released by someone else): forgotten without a command. A
// queued one is still the agent's (a snapshot taken before its hold).
// Pure.
func toUnhold(held map[string]foreignHold, jobs []forecast.LocalJob, res []wire.Reservation) (release, gone []string) {
	state := map[string]string{}
	for _, j := range jobs {
		state[j.ID] = j.State
	}
	holding := map[string]bool{}
	for _, r := range res {
		holding[r.Job] = true
	}
	for id, h := range held {
		switch {
		case state[id] != forecast.JobHeld && state[id] != forecast.JobQueued:
			gone = append(gone, id)
		case !holding[h.Job]:
			release = append(release, id)
		}
	}
	slices.Sort(release)
	slices.Sort(gone)
	return release, gone
}

// mayHoldForeign reports whether a build has anything to do about queued
// foreign jobs: holding is on and the snapshot has a queued job bound to
// a grid reservation, or the agent holds jobs to release.
func (a *Agent) mayHoldForeign(snap forecast.Snapshot, namer GridJobNamer) bool {
	if a.deps.Holder == nil {
		return false
	}
	if len(a.ledger.Foreign) > 0 {
		return true
	}
	if a.cfg.ForeignJobs != ForeignHold {
		return false
	}
	for _, j := range snap.Jobs {
		if _, ok := namer.JobOf(j.Reservation); ok && j.State == forecast.JobQueued {
			return true
		}
	}
	return false
}

// holdForeign holds the queued foreign jobs of snap and releases the
// holds whose grid job is gone (caller holds resMu). Under ForeignGrace
// it only releases holds made before (the policy changed).
func (a *Agent) holdForeign(ctx context.Context, snap forecast.Snapshot, namer GridJobNamer, parts Dispatched, now int64) {
	a.loadHeld()
	if !a.mayHoldForeign(snap, namer) {
		return
	}
	res, err := a.deps.Reserver.List(ctx)
	if err != nil {
		a.log.Warn().Err(err).Msg("foreign jobs: reservations not listed; holds are checked at the next build")
		return
	}
	release, gone := toUnhold(a.ledger.Foreign, snap.Jobs, res)
	if a.cfg.ForeignJobs != ForeignHold {
		release = append(release, slices.Sorted(maps.Keys(a.ledger.Foreign))...)
	}
	for _, id := range gone {
		delete(a.ledger.Foreign, id)
	}
	for _, id := range release {
		a.unholdForeign(ctx, id)
	}
	if a.cfg.ForeignJobs == ForeignHold {
		for _, f := range queuedForeign(snap.Jobs, res, parts) {
			if _, done := a.ledger.Foreign[f.LocalID]; !done { // a snapshot taken before the hold
				a.holdOne(ctx, f, now)
			}
		}
	}
	if len(release)+len(gone) > 0 {
		a.saveHeld()
	}
}

// holdOne holds one queued foreign job, audits and reports it.
func (a *Agent) holdOne(ctx context.Context, f ForeignJob, now int64) {
	argv, err := a.deps.Holder.Hold(ctx, f.LocalID)
	rec := wire.AuditRecord{Action: "foreign-hold", Job: f.Job, Code: wire.CodeOK, Command: argv, Detail: f,
		Message: fmt.Sprintf("%s: local job %s (user %s, account %s, name %s) is queued to run in reservation %s and is not the grid job's part: held (operator hold) until the grid job's reservation is gone",
			ForeignFinding, f.LocalID, f.User, f.Account, f.Name, f.Reservation)}
	if err != nil {
		rec.Code = wire.CodeSchedulerEr
		rec.Message = fmt.Sprintf("%s: local job %s (user %s, account %s) is queued to run in reservation %s; holding it failed: %v",
			ForeignFinding, f.LocalID, f.User, f.Account, f.Reservation, err)
	} else {
		a.ledger.Foreign[f.LocalID] = foreignHold{Job: f.Job, Reservation: f.Reservation, Since: now}
		a.saveHeld()
	}
	if aerr := a.audit(ctx, rec); aerr != nil {
		a.log.Error().Err(aerr).Str("job", f.Job).Msg("audit of foreign hold failed")
	}
	a.met.ForeignJob()
	a.log.Warn().Str("job", f.Job).Str("local_id", f.LocalID).Err(err).Msg("foreign job queued in a grid reservation: held")
	_ = a.publishJobEvent(wire.JobEvent{Type: wire.TypeJobEvent, Job: f.Job, State: "foreign", Time: now, LocalID: f.LocalID, Message: rec.Message})
}

// unholdForeign releases the hold of one job the agent held.
func (a *Agent) unholdForeign(ctx context.Context, id string) {
	h := a.ledger.Foreign[id]
	argv, err := a.deps.Holder.Unhold(ctx, id)
	rec := wire.AuditRecord{Action: "foreign-release", Job: h.Job, Code: wire.CodeOK, Command: argv,
		Message: fmt.Sprintf("local job %s released (qrls -h o): grid job %s holds no reservation here any more", id, h.Job)}
	if err != nil {
		rec.Code, rec.Message = wire.CodeSchedulerEr, fmt.Sprintf("local job %s: releasing its hold failed (retried at the next build): %v", id, err)
	} else {
		delete(a.ledger.Foreign, id)
	}
	if aerr := a.audit(ctx, rec); aerr != nil {
		a.log.Error().Err(aerr).Str("job", h.Job).Msg("audit of foreign release failed")
	}
	a.log.Info().Str("job", h.Job).Str("local_id", id).Err(err).Msg("foreign job's hold released")
}

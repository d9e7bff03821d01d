package daemon

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"lookahead/broker"
	"lookahead/wire"
)

// Jobs submitted with a script are run by the broker (see
// broker/lifecycle.go): right after the commit, and again at every cycle
// until each site answered, every involved agent is asked to dispatch its
// part; the parts are followed through the sites' job events; a job that
// is over (finished, or failed: refused, late, lost, a part failed) is
// concluded, its remaining parts are deleted (stop) and its reservations
// released.

// dispatchPending sends the dispatch requests of every reserved job with
// parts not yet submitted, in parallel with one deadline, and records the
// answers. A site that does not answer is asked again next cycle (the
// agent finds a part it already submitted); one that did not answer
// before is not asked until it answers (answering.go).
func (b *Broker) dispatchPending(ctx context.Context) error {
	silent := b.silentSites()
	b.mu.Lock()
	var reqs []wire.DispatchRequest
	for _, j := range b.state.InState(wire.JobReserved) {
		if j.Alloc == nil || b.now() >= j.Alloc.End {
			continue
		}
		for _, r := range broker.Dispatches(j, b.cfg.Name) {
			if !silent[r.Site] { // asked again once it answers (knock)
				reqs = append(reqs, r)
			}
		}
	}
	b.mu.Unlock()
	if len(reqs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ReserveTimeout)
	defer cancel()
	type answer struct {
		req   wire.DispatchRequest
		reply wire.DispatchReply
		err   error
	}
	ch := make(chan answer, len(reqs))
	for _, r := range reqs {
		go func() {
			var reply wire.DispatchReply
			err := b.request(ctx, wire.AgentSubject(r.Site, wire.VerbDispatch), r, &reply)
			ch <- answer{r, reply, err}
		}()
	}
	for range reqs {
		a := <-ch
		if err := b.dispatched(context.WithoutCancel(ctx), a.req, a.reply, a.err); err != nil {
			return err
		}
	}
	return nil
}

// dispatchAgain reports whether a site's answer to a dispatch request
// leaves the part to be dispatched again: none came, or it expired there
// (it waited past its timeout; nothing was submitted). Any other refusal
// fails the part.
func dispatchAgain(reply wire.DispatchReply, err error) bool {
	return err != nil || reply.Code == wire.CodeExpired
}

// dispatched records one site's answer to a dispatch request.
func (b *Broker) dispatched(ctx context.Context, req wire.DispatchRequest, reply wire.DispatchReply, err error) error {
	rec := wire.AuditRecord{Action: "dispatch", Job: req.Job, Site: req.Site, Identity: wire.Identity{User: req.User, Account: req.Account},
		Code: reply.Code, Message: reply.Message, Detail: reply}
	b.heard(req.Site, "dispatch "+req.Job, err)
	if dispatchAgain(reply, err) {
		if err != nil {
			rec.Code, rec.Message, rec.Detail = wire.CodeInternal, err.Error(), nil
		}
		b.audit(ctx, rec)
		b.log.Warn().Err(err).Str("job", req.Job).Str("site", req.Site).Str("code", reply.Code).Msg("dispatch unanswered or expired; will retry")
		return nil
	}
	b.audit(ctx, rec)
	e := broker.Event{Kind: broker.EvDispatched, Time: b.now(), Job: req.Job, Site: req.Site, Message: reply.Message,
		Part: &wire.PartStatus{LocalID: reply.LocalID, LocalUser: reply.LocalUser, Output: reply.Output, Error: reply.Error}}
	if reply.Code != wire.CodeOK {
		e.State, e.Message = wire.PartFailed, reply.Code+": "+reply.Message
		e.Part = &wire.PartStatus{}
	}
	defer b.flushAudits(ctx)
	b.lockToWrite()
	defer b.mu.Unlock()
	if !answerNews(b.state.Job(req.Job), req.Site, e) {
		return nil // cancelled, concluded, or a retry's answer already known
	}
	if err := b.record(ctx, e); err != nil {
		return fmt.Errorf("dispatch of %s on %s: %w", req.Job, req.Site, err)
	}
	b.log.Info().Str("job", req.Job).Str("site", req.Site).Int("part", req.Part).Str("code", reply.Code).
		Str("local_id", reply.LocalID).Str("local_user", reply.LocalUser).Msg("part dispatched")
	b.concludeLocked(ctx, req.Job)
	return nil
}

// answerNews says a dispatch answer e for site's part of job j is still to
// be recorded: the part is pending, or the site's job events showed it
// running (or ended) before the answer came back and the answer brings the
// local user and output paths that only it carries (on a loaded machine
// the part can start before the broker has handled the answer).
func answerNews(j *broker.Job, site string, e broker.Event) bool {
	if j == nil || j.Parts[site] == nil {
		return false
	}
	switch j.State {
	case wire.JobReserved, wire.JobDispatched, wire.JobRunning:
	default:
		return false
	}
	p := j.Parts[site]
	if p.State == wire.PartPending {
		return true
	}
	return e.State != wire.PartFailed && p.LocalUser == "" && e.Part.LocalUser != ""
}

// maxPath bounds an output path a site reports (PATH_MAX).
const maxPath = 4096

// siteEvent turns a site's job event into the event to record for job j,
// ok false when it does not apply. For a dispatched job the event carries
// the part's detail; a report that a part ended without an exit status or
// a local id (a site that saw the part's local job vanish, not what it
// ended with) is left to the part follower's report.
func siteEvent(j *broker.Job, site string, je wire.JobEvent, now int64) (broker.Event, bool) {
	e := broker.Event{Kind: broker.EvSite, Time: now, Job: je.Job, Site: site, State: je.State, Message: je.Message}
	if je.State == broker.SiteLost || je.State == broker.SiteForeign || je.State == broker.SiteRebound {
		e.Message = wire.Clip(je.Message, maxMessage)
		if je.State == broker.SiteForeign && je.Until > 0 {
			e.Part = &wire.PartStatus{BlockedUntil: je.Until}
		}
		if je.State == broker.SiteRebound {
			e.Reservations = siteReservations(je.Reservations, site)
			return e, j.Holds() && j.State != wire.JobCommitting
		}
		return e, j.Holds()
	}
	if !j.Dispatched() {
		return e, j.State == wire.JobReserved || j.State == wire.JobRunning
	}
	if je.State != broker.SiteStarted && je.LocalID == "" && je.ExitStatus == nil {
		return e, false
	}
	e.Part = &wire.PartStatus{LocalID: je.LocalID, Start: je.Start, End: je.End, ExitStatus: je.ExitStatus,
		Output: wire.Clip(je.Output, maxPath), Error: wire.Clip(je.Error, maxPath)}
	switch j.State {
	case wire.JobReserved, wire.JobDispatched, wire.JobRunning:
		return e, true
	}
	return e, false
}

// siteReservations are a site's reservations as it sent them, each with
// the site named.
func siteReservations(rs []wire.Reservation, site string) []wire.Reservation {
	out := slices.Clone(rs)
	for i := range out {
		out[i].Site = site
	}
	return out
}

// concludeLocked records the end of dispatched job id if it is over now,
// audits the final charge and asks for a cycle to send the stops and
// releases. b.mu must be held; the caller flushes the audit records
// (flushAudits) after releasing it.
func (b *Broker) concludeLocked(ctx context.Context, id string) {
	j := b.state.Job(id)
	if j == nil {
		return
	}
	committed := j.Cost
	e, over := broker.Conclude(j, b.now(), int64(b.cfg.StartGrace/time.Second))
	if !over {
		return
	}
	if err := b.record(ctx, e); err != nil {
		b.log.Error().Err(err).Str("job", id).Msg("conclusion not recorded; will retry")
		return
	}
	b.auditLocked(wire.AuditRecord{Action: "conclude", Job: id, Code: e.State, Message: e.Message,
		Detail: map[string]any{"stop": e.Stop, "release": e.Release, "parts": j.PartList()}})
	b.auditLocked(wire.AuditRecord{Action: "charge", Job: id, Code: wire.CodeOK,
		Message: fmt.Sprintf("%.2f of %.2f credits (%s)", e.Cost, committed, e.State), Detail: e.Cost})
	b.log.Info().Str("job", id).Str("state", e.State).Str("why", e.Message).Float64("charged", e.Cost).
		Strs("stop", e.Stop).Msg("dispatched job over")
	b.kick()
}

// concludeDue concludes every dispatched job that is over by now (parts
// late or lost are only noticed by the clock).
func (b *Broker) concludeDue(ctx context.Context) {
	defer b.flushAudits(ctx)
	b.lockToWrite()
	defer b.mu.Unlock()
	for _, st := range []string{wire.JobReserved, wire.JobDispatched, wire.JobRunning} {
		for _, j := range b.state.InState(st) {
			if j.Dispatched() {
				b.concludeLocked(ctx, j.Req.ID)
			}
		}
	}
}

// stopOwed sends every stop that is due; a site that confirms is recorded
// as stopped, others are retried next cycle. Sites that do not answer are
// skipped as releaseOwed skips them.
func (b *Broker) stopOwed(ctx context.Context) error {
	b.mu.Lock()
	owed := b.state.OwedStops(b.now())
	b.mu.Unlock()
	silent := b.silentSites()
	for _, o := range owed {
		if silent[o.Site] {
			continue // knocked at (releaseOwed); the stop waits for its answer
		}
		reply, err := b.stop(ctx, o.Job, o.Site)
		b.heard(o.Site, "stop "+o.Job, err)
		if err != nil && noAnswer(err) {
			silent[o.Site] = true
		}
		if err != nil || reply.Code != wire.CodeOK {
			b.log.Warn().Err(err).Str("job", o.Job).Str("site", o.Site).Str("code", reply.Code).Msg("stop failed; will retry")
			continue
		}
		b.mu.Lock()
		err = b.record(ctx, broker.Event{Kind: broker.EvStopped, Time: b.now(), Job: o.Job, Site: o.Site,
			Message: stoppedNote(reply)})
		b.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// stop asks one site to delete a job's parts and audits it.
func (b *Broker) stop(ctx context.Context, job, site string) (wire.StopReply, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ReserveTimeout)
	defer cancel()
	b.mu.Lock()
	reason := "broker: the job is over"
	if j := b.state.Job(job); j != nil {
		reason = "broker: job " + j.State
	}
	b.mu.Unlock()
	req := wire.StopRequest{Type: wire.TypeStop, Job: job, Site: site, Reason: reason, RequestedBy: b.cfg.Name}
	var reply wire.StopReply
	err := b.request(ctx, wire.AgentSubject(site, wire.VerbStop), req, &reply)
	r := wire.AuditRecord{Action: "stop", Job: job, Site: site, Code: reply.Code, Message: reason, Detail: reply.Deleted}
	if err != nil {
		r.Code, r.Message = wire.CodeInternal, err.Error()
	}
	b.audit(ctx, r)
	return reply, err
}

// stopPending reports whether a stop is still owed for job on site (its
// release waits until the parts are deleted). b.mu must not be held.
func (b *Broker) stopPending(job, site string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	j := b.state.Job(job)
	if j == nil {
		return false
	}
	_, owed := j.PendingStop[site]
	return owed
}

// logPart logs what a site reported of a part, with its start skew (the
// real start minus the reservation's). b.mu must be held.
func (b *Broker) logPart(j *broker.Job, site string) {
	p := j.Parts[site]
	if p == nil || j.Alloc == nil {
		return
	}
	ev := b.log.Info().Str("job", j.Req.ID).Str("site", site).Int("part", p.Part).Str("local_id", p.LocalID).Str("state", p.State)
	if p.Start != 0 {
		ev = ev.Int64("start_skew_s", p.Start-j.Alloc.Start)
	}
	if p.ExitStatus != nil {
		ev = ev.Int("exit_status", *p.ExitStatus)
	}
	ev.Msg("part " + p.State)
}

// stoppedNote says what a site's stop did: the local jobs deleted, or its
// note (nothing was left to delete).
func stoppedNote(r wire.StopReply) string {
	if len(r.Deleted) == 0 {
		return r.Note
	}
	return "deleted " + strings.Join(r.Deleted, ", ")
}

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// commit reserves a planned job on all its sites or none: the intent is
// recorded durably first, the reserve requests go out in parallel with one
// deadline, and the outcome is recorded after. On any refusal, stale answer
// or silence the sites that reserved (or may have) are released and the
// job waits for the next cycle.
func (b *Broker) commit(ctx context.Context, id string, a forecast.Allocation, revisions map[string]uint64) error {
	b.lockToWrite()
	j := b.state.Job(id)
	if j == nil || j.State != wire.JobWaiting || j.OwesReleaseOn(a.Sites()) || b.staleFor(a, revisions) || b.touchesUnanswered(a) {
		b.mu.Unlock()
		// cancelled meanwhile, old reservations on one of a's sites not yet
		// released, a site said stale, or one stopped answering in this cycle
		return nil
	}
	if msg := b.state.CheckCommit(b.cfg.Policy.Budgets, j, a.Cost); msg != "" {
		j.Message = "not reserved, over budget at the planned cost: " + msg
		b.mu.Unlock()
		return nil
	}
	reqs := broker.ReserveRequests(j.Req, a, revisions, b.cfg.Name)
	intent := broker.Event{Kind: broker.EvIntent, Time: b.now(), Job: id, Alloc: &a, Revisions: pick(revisions, a.Sites())}
	err := b.record(ctx, intent)
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("commit %s: %w", id, err)
	}
	b.audit(ctx, wire.AuditRecord{Action: "commit-intent", Job: id, Identity: reqs[0].Identity, Code: wire.CodeOK, Detail: a})
	if b.failAt("intent") {
		return ErrCrashed
	}
	answers, crashed := b.reserveAll(ctx, reqs)
	if crashed {
		return ErrCrashed
	}
	return b.conclude(ctx, id, a, reqs, answers)
}

// staleFor reports whether a site of a answered stale on the revision a
// was planned on; b.mu must be held.
func (b *Broker) staleFor(a forecast.Allocation, revisions map[string]uint64) bool {
	for _, s := range a.Sites() {
		if rev, refused := b.staleRev[s]; refused && revisions[s] <= rev {
			return true
		}
	}
	return false
}

func pick(revisions map[string]uint64, sites []string) map[string]uint64 {
	out := make(map[string]uint64, len(sites))
	for _, s := range sites {
		out[s] = revisions[s]
	}
	return out
}

func (b *Broker) failAt(point string) bool {
	if b.faults.Point != nil && b.faults.Point(point) {
		b.crashed.Store(true)
		b.log.Warn().Str("point", point).Msg("stopping at injected fail point")
		return true
	}
	return false
}

// reserveAll sends every request in parallel and collects the answers until
// the deadline; a site that does not answer in time gets a timeout error.
func (b *Broker) reserveAll(ctx context.Context, reqs []wire.ReserveRequest) ([]broker.Answer, bool) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ReserveTimeout)
	defer cancel()
	ch := make(chan broker.Answer, len(reqs))
	for _, r := range reqs {
		r.TimeoutMS = siteTimeout(b.cfg.ReserveTimeout).Milliseconds()
		go func() {
			var reply wire.ReserveReply
			err := b.request(ctx, wire.AgentSubject(r.Site, wire.VerbReserve), r, &reply)
			if err != nil {
				ch <- broker.Answer{Site: r.Site, Err: err}
				return
			}
			ch <- broker.Answer{Site: r.Site, Reply: &reply}
		}()
	}
	var answers []broker.Answer
	for range reqs {
		a := <-ch
		answers = append(answers, a)
		if b.failAt("answer:" + a.Site) {
			return nil, true
		}
	}
	return answers, false
}

// siteTimeout is how long a site may take on a reserve request, counted
// from when it receives it (a relative timeout: the two hosts' clocks are
// never compared): a tenth (at most 1 s) less than the broker waits, so a
// site that runs out of time answers expired before the broker gives up.
func siteTimeout(wait time.Duration) time.Duration {
	return wait - min(wait/10, time.Second)
}

// request sends v as JSON to subject and decodes the reply into out.
func (b *Broker) request(ctx context.Context, subject string, v, out any) error {
	v, err := b.stamp(ctx, v) // the term's epoch and the timing; nothing is sent after the term
	if err != nil {
		return fmt.Errorf("request to %s: %w", subject, err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode request to %s: %w", subject, err)
	}
	var msg *nats.Msg
	if site, ok := wire.AgentSite(subject); ok {
		msg, err = b.agents.request(ctx, site, subject, data) // replies on the site's own subject
	} else {
		msg, err = b.nc.RequestWithContext(ctx, subject, data)
	}
	if err != nil {
		return fmt.Errorf("request to %s: %w", subject, err)
	}
	if err := json.Unmarshal(msg.Data, out); err != nil {
		return fmt.Errorf("reply from %s: %w", subject, err)
	}
	b.checkFenced(subject, out)
	return nil
}

func (b *Broker) conclude(ctx context.Context, id string, a forecast.Allocation, reqs []wire.ReserveRequest, answers []broker.Answer) error {
	recs := make([]wire.AuditRecord, 0, len(answers))
	for _, ans := range answers {
		r := wire.AuditRecord{Action: "reserve", Job: id, Site: ans.Site, Identity: reqs[0].Identity}
		if ans.Err != nil {
			r.Code, r.Message = wire.CodeInternal, ans.Err.Error()
		} else {
			r.Code, r.Message, r.Detail = ans.Reply.Code, ans.Reply.Message, ans.Reply.Reservations
		}
		recs = append(recs, r)
	}
	b.auditAll(ctx, recs) // one wait for every site's record
	for _, ans := range answers {
		b.heard(ans.Site, "reserve "+id, ans.Err)
	}
	jd := broker.Judge(reqs, answers)
	b.mu.Lock()
	for i, ans := range answers {
		if ans.Reply != nil && ans.Reply.Code == wire.CodeStale {
			b.staleRev[ans.Site] = max(b.staleRev[ans.Site], revisionOf(reqs, answers[i].Site))
		}
	}
	b.mu.Unlock()
	e := broker.Event{Kind: broker.EvOutcome, Time: b.now(), Job: id, OK: jd.OK, Reservations: jd.Reservations,
		Cost: a.Cost, Release: jd.Release, Message: jd.Message}
	b.lockToWrite()
	err := b.record(ctx, e)
	b.mu.Unlock()
	if err != nil {
		// The job stays committing in memory; the next cycle's settle
		// rolls it back (releasing whatever the sites reserved) as soon as
		// the job stream takes events again.
		b.kick()
		return fmt.Errorf("commit outcome of %s not recorded (rolled back at the next cycle): %w", id, err)
	}
	if b.failAt("outcome") {
		return ErrCrashed
	}
	if jd.OK {
		b.cfg.Metrics.Committed()
		b.auditAll(ctx, []wire.AuditRecord{
			{Action: "commit", Job: id, Identity: reqs[0].Identity, Code: wire.CodeOK, Detail: jd.Reservations},
			{Action: "charge", Job: id, Identity: reqs[0].Identity, Code: wire.CodeOK, Message: fmt.Sprintf("%.2f credits", a.Cost), Detail: a.Cost},
		})
		b.log.Info().Str("job", id).Strs("sites", a.Sites()).Int64("start", a.Start).Float64("cost", a.Cost).Msg("reserved")
		return b.dispatchPending(ctx) // a job with a script: its parts go out now
	}
	b.cfg.Metrics.RolledBack(rollbackReason(answers))
	b.audit(ctx, wire.AuditRecord{Action: "rollback", Job: id, Identity: reqs[0].Identity, Code: rollbackReason(answers), Message: jd.Message, Detail: jd.Release})
	b.log.Warn().Str("job", id).Str("why", jd.Message).Msg("commit rolled back")
	return b.releaseOwed(ctx)
}

func revisionOf(reqs []wire.ReserveRequest, site string) uint64 {
	for _, r := range reqs {
		if r.Site == site {
			return r.Revision
		}
	}
	return 0
}

// rollbackReason is a stable code for why a commit failed.
func rollbackReason(answers []broker.Answer) string {
	for _, a := range answers {
		switch {
		case a.Err != nil && errors.Is(a.Err, context.DeadlineExceeded):
			return "timeout"
		case a.Err != nil:
			return "unreachable"
		case a.Reply.Code != wire.CodeOK:
			return a.Reply.Code
		}
	}
	return "incomplete"
}

// releaseOwed sends every release that is due; a site that confirms (ok or
// nothing to release) is recorded as released, others are retried next
// cycle. A site that did not answer before the pass is not asked (it is
// knocked at instead, answering.go); one that stops answering during it
// costs that one request, and its other releases wait.
func (b *Broker) releaseOwed(ctx context.Context) error {
	b.mu.Lock()
	owed := b.state.OwedReleases(b.now())
	b.mu.Unlock()
	silent := b.silentSites()
	for _, o := range owed {
		if b.stopPending(o.Job, o.Site) || silent[o.Site] {
			continue // the job's parts there are deleted first, or the site is silent
		}
		reply, err := b.release(ctx, o.Job, o.Site, "broker: release owed")
		b.heard(o.Site, "release "+o.Job, err)
		if err != nil && noAnswer(err) {
			silent[o.Site] = true
		}
		if err != nil || (reply.Code != wire.CodeOK && reply.Code != wire.CodeNotFound) {
			b.log.Warn().Err(err).Str("job", o.Job).Str("site", o.Site).Str("code", reply.Code).Msg("release failed; will retry")
			continue
		}
		b.lockToWrite()
		err = b.record(ctx, broker.Event{Kind: broker.EvReleased, Time: b.now(), Job: o.Job, Site: o.Site, Message: reply.Note})
		b.mu.Unlock()
		if err != nil {
			return err
		}
	}
	b.knockSilent()
	return nil
}

// release asks one site to release a job's reservations and audits it.
func (b *Broker) release(ctx context.Context, job, site, reason string) (wire.ReleaseReply, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ReserveTimeout)
	defer cancel()
	req := wire.ReleaseRequest{Type: wire.TypeRelease, Job: job, Site: site, Reason: reason, RequestedBy: b.cfg.Name}
	var reply wire.ReleaseReply
	err := b.request(ctx, wire.AgentSubject(site, wire.VerbRelease), req, &reply)
	r := wire.AuditRecord{Action: "release", Job: job, Site: site, Code: reply.Code, Message: reason, Detail: reply.Released}
	if err != nil {
		r.Code, r.Message = wire.CodeInternal, err.Error()
	}
	b.audit(ctx, r)
	return reply, err
}

// settle rolls back commits left without an outcome, releases what is
// owed and expires reserved jobs that never started by the end of their
// reservation. It runs under commitMu, so no commit is in flight.
func (b *Broker) settle(ctx context.Context) error {
	if err := b.rollBackUnfinished(ctx, "rolled back: the commit's outcome could not be recorded", func(*broker.Job) int64 { return 0 }); err != nil {
		return err
	}
	b.concludeDue(ctx)
	if err := b.stopOwed(ctx); err != nil {
		return err
	}
	now := b.now()
	defer b.flushAudits(ctx)
	b.lockToWrite()
	for _, j := range b.state.InState(wire.JobReserved) {
		if j.Alloc == nil || j.Alloc.End > now || j.Dispatched() {
			continue // a dispatched job is concluded instead
		}
		e := broker.Event{Kind: broker.EvExpired, Time: now, Job: j.Req.ID, Release: j.Alloc.Sites(),
			Message: "the job never started in its reservation; released at its end"}
		if err := b.record(ctx, e); err != nil {
			b.mu.Unlock()
			return err
		}
		b.cfg.Metrics.NoShowReleased()
		b.auditLocked(wire.AuditRecord{Action: "no-show", Job: j.Req.ID, Code: wire.CodeOK, Message: e.Message, Detail: e.Release})
		b.log.Warn().Str("job", j.Req.ID).Msg("reservation expired unused")
	}
	b.mu.Unlock()
	if err := b.releaseOwed(ctx); err != nil {
		return err
	}
	return b.dispatchPending(ctx)
}

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/forecast"
	"lookahead/wire"
)

// heldTol is how far a listed reservation's times may move before it
// counts as altered (Maui rounds; relative setres times are taken when
// the command runs).
const heldTol = 120

// remember records reservations the agent just made for spec's job
// (caller holds resMu).
func (a *Agent) remember(spec ReserveSpec, rs []wire.Reservation) {
	a.loadHeld()
	if len(rs) > 0 {
		spec.Bind = BindOf(rs[0].Submit)
	}
	spec.Capacity, spec.InUse = nil, nil // re-read at repair time
	a.ledger.Jobs[spec.Job] = heldEntry{Spec: spec, Reservations: rs}
	delete(a.ledger.Released, spec.Job)
	a.saveHeld()
}

// forget drops a released job, remembering what it released until its
// end: a scheduler that loses its recent past (kill -9 of Maui) brings it
// back, and checkHolds releases it again (caller holds resMu).
func (a *Agent) forget(job string) {
	a.loadHeld()
	e, ok := a.ledger.Jobs[job]
	if !ok {
		return
	}
	delete(a.ledger.Jobs, job)
	var ids []string
	for _, r := range e.Reservations {
		ids = append(ids, r.ID)
	}
	a.ledger.Released[job] = releasedEntry{IDs: ids, End: e.Spec.End}
	a.saveHeld()
}

// bindFor fills what spec's binding account depends on (caller holds
// resMu): the account to keep — the one asked (a broker's repair), else
// the one the ledger holds for the job (its parts were told it) — and,
// in InUse, every other held job's account, which a new binding must
// never take (a lost reservation's part still submits with it).
func (a *Agent) bindFor(spec *ReserveSpec) {
	a.loadHeld()
	if e, ok := a.ledger.Jobs[spec.Job]; ok && spec.Bind == "" {
		spec.Bind = e.Spec.Bind
	}
	spec.InUse = append(spec.InUse, otherBinds(a.ledger, spec.Job)...)
}

// loadHeld reads Config.HoldState once (caller holds resMu). A missing or
// unreadable file is an empty ledger (logged when unreadable).
func (a *Agent) loadHeld() {
	if a.ledger.Jobs != nil {
		return
	}
	a.ledger = heldLedger{Version: heldLedgerVersion, Jobs: map[string]heldEntry{}, Released: map[string]releasedEntry{},
		Foreign: map[string]foreignHold{}}
	if a.cfg.HoldState == "" {
		return
	}
	data, err := os.ReadFile(a.cfg.HoldState)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	var l heldLedger
	if err == nil {
		err = json.Unmarshal(data, &l)
		if err == nil && l.Version != heldLedgerVersion {
			err = fmt.Errorf("version %d, want %d", l.Version, heldLedgerVersion)
		}
	}
	if err != nil || l.Jobs == nil {
		a.log.Warn().Err(err).Str("file", a.cfg.HoldState).Msg("held reservations not read: a scheduler restart is not repaired for them")
		return
	}
	if l.Released == nil {
		l.Released = map[string]releasedEntry{}
	}
	if l.Foreign == nil {
		l.Foreign = map[string]foreignHold{}
	}
	a.ledger = l
}

func (a *Agent) saveHeld() {
	if err := writeJSONFile(a.cfg.HoldState, a.ledger); err != nil {
		a.log.Warn().Err(err).Str("file", a.cfg.HoldState).Msg("held reservations not written")
	}
}

// writeJSONFile writes v to path through a temporary file and a rename;
// an empty path writes nothing.
func writeJSONFile(path string, v any) error {
	if path == "" {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// checkHolds compares the reservations the agent holds with what the
// scheduler lists and repairs the difference (see held.go). It runs at
// start and at every refresh (the agent's poll); the first one after the
// scheduler answers again repairs everything a restart lost or altered.
// snap (when snapOK) gives the nodes' processors for the overlap check.
func (a *Agent) checkHolds(ctx context.Context, snap forecast.Snapshot, snapOK bool, now int64) {
	if a.deps.Reserver == nil {
		return
	}
	a.resMu.Lock()
	defer a.resMu.Unlock()
	a.loadHeld()
	if len(a.ledger.Jobs)+len(a.ledger.Released) == 0 {
		return // nothing held or released: nothing a restart could take or bring back
	}
	listed, err := a.deps.Reserver.List(ctx)
	if err != nil || !snapOK {
		a.schedDown = true // repair when it answers again, with a snapshot
		return
	}
	repair, expired := checkHeld(a.ledger, listed, now, heldTol)
	back := revenants(a.ledger, listed, now)
	restarted := a.schedDown || len(back) > 0
	for _, r := range repair {
		restarted = restarted || r.Why == HeldAltered
	}
	if restarted {
		a.met.SchedulerRestart()
		// What happened: only a scheduler that did not answer is known
		// to have restarted; a change between two answering polls may
		// be a hand edit as well.
		msg := "grid reservations lost, altered or back since the last check (a scheduler restart between two checks, or a hand edit): releasing what came back, repairing the rest"
		if a.schedDown {
			msg = "scheduler answers again after not answering: releasing what came back, repairing the grid reservations it lost or altered"
		}
		a.log.Warn().Int("to_repair", len(repair)).Int("back", len(back)).Msg(msg)
	}
	a.schedDown = false
	for _, job := range expired {
		delete(a.ledger.Jobs, job)
	}
	dropped := a.dropReleased(now)
	// What came back first: it may hold the processors, and the binding
	// accounts, of reservations to re-create.
	for _, job := range back {
		a.releaseRevenant(ctx, job)
	}
	for _, r := range repair {
		a.repairHeld(ctx, r, snap, now)
	}
	if len(expired)+len(repair)+dropped > 0 {
		a.saveHeld()
	}
}

// dropReleased forgets released jobs whose reservations ended by now;
// it returns how many.
func (a *Agent) dropReleased(now int64) int {
	n := 0
	for job, rel := range a.ledger.Released {
		if rel.End <= now {
			delete(a.ledger.Released, job)
			n++
		}
	}
	return n
}

// releaseRevenant releases again a job's reservations that the agent
// released but the scheduler lists again, audited as a repair. A failure
// is retried at the next check.
func (a *Agent) releaseRevenant(ctx context.Context, job string) {
	rel, err := a.deps.Reserver.Release(ctx, job)
	msg := fmt.Sprintf("reservation %s was released by this agent and came back (a scheduler restart restored it): released again %v",
		strings.Join(a.ledger.Released[job].IDs, ","), rel.IDs)
	code := wire.CodeOK
	if err != nil {
		a.met.RepairFailed()
		code, msg = wire.CodeInternal, fmt.Sprintf("reservation %s came back after a scheduler restart; releasing it again failed: %v",
			strings.Join(a.ledger.Released[job].IDs, ","), err)
	}
	a.auditRepair(ctx, job, code, msg, rel.Commands)
	a.log.Warn().Str("job", job).Err(err).Strs("released", rel.IDs).Msg("released reservation came back: released again")
}

// repairHeld re-creates one job's reservations as they were made (an
// altered one is released first), or reports the job lost to the broker
// when the scheduler refuses. A failure of the machinery is retried at
// the next cycle.
func (a *Agent) repairHeld(ctx context.Context, r heldCheck, snap forecast.Snapshot, now int64) {
	var cmds [][]string
	if r.Why == HeldAltered && r.ACLOnly && a.restoreACL(ctx, r) {
		return
	}
	if r.Why == HeldAltered {
		rel, err := a.deps.Reserver.Release(ctx, r.Job)
		cmds = append(cmds, rel.Commands...)
		if err != nil {
			a.repairFailed(ctx, r, cmds, fmt.Errorf("release of the altered reservation: %w", err), false)
			return
		}
	}
	spec := r.Entry.Spec
	spec.Start = max(spec.Start, now)
	spec.Capacity = map[string]int{}
	for _, n := range snap.Nodes {
		if n.Usable() {
			spec.Capacity[n.Name] = n.Procs
		}
	}
	spec.InUse = nil
	for _, j := range snap.Jobs {
		if j.Account != "" && !slices.Contains(spec.InUse, j.Account) {
			spec.InUse = append(spec.InUse, j.Account)
		}
	}
	a.bindFor(&spec) // keeps the entry's binding; never another held job's
	res, err := a.deps.Reserver.Reserve(ctx, spec)
	cmds = append(cmds, res.Commands...)
	if err != nil {
		a.repairFailed(ctx, r, cmds, err, errors.Is(err, ErrScheduler))
		return
	}
	rs := a.stamp(res.Reservations)
	a.remember(r.Entry.Spec, rs)
	msg := fmt.Sprintf("reservation %s (%s: %s) re-created as %s", ids(r.Entry.Reservations), r.Why, r.Detail, ids(rs))
	was, bound := r.Entry.Spec.Bind, BindOf(submitOf(rs))
	if was != bound {
		msg += fmt.Sprintf(", bound to %s (was %s: the account is taken; parts submitted with -A %s no longer get in)", bound, was, was)
	}
	a.auditRepair(ctx, r.Job, wire.CodeOK, msg, cmds)
	if was != bound { // the broker shows the new options, and why, in the job's status
		_ = a.publishJobEvent(wire.JobEvent{Type: wire.TypeJobEvent, Job: r.Job, State: PartRebound, Time: a.deps.Now().Unix(),
			Message: msg, Reservations: rs})
	}
	a.log.Warn().Str("job", r.Job).Str("why", r.Why).Str("detail", r.Detail).Str("now", ids(rs)).Msg("grid reservation repaired")
	a.Notify(SourceReservation)
}

// restoreACL sets a reservation whose ACL alone was altered back in place
// when the reserver can (ACLRestorer: a Slurm site), so the parts queued
// in it stay, where a release would cancel them. A refusal (slurmctld
// re-checks the cores on any update and refuses while another job runs on
// the reservation's nodes) leaves the re-creation to repairHeld, as
// before. Says whether it was done.
func (a *Agent) restoreACL(ctx context.Context, r heldCheck) bool {
	ar, ok := a.deps.Reserver.(ACLRestorer)
	if !ok {
		return false
	}
	res, err := ar.RestoreACL(ctx, r.Entry.Spec)
	if err != nil {
		a.log.Warn().Err(err).Str("job", r.Job).Strs("commands", flat(res.Commands)).
			Msg("grid reservation's ACL not restored in place: re-creating it")
		return false
	}
	rs := a.stamp(res.Reservations)
	a.remember(r.Entry.Spec, rs)
	a.auditRepair(ctx, r.Job, wire.CodeOK, fmt.Sprintf("reservation %s (%s: %s): ACL restored in place, parts queued in it kept",
		ids(r.Entry.Reservations), r.Why, r.Detail), res.Commands)
	a.log.Warn().Str("job", r.Job).Str("why", r.Why).Str("detail", r.Detail).Str("now", ids(rs)).
		Msg("grid reservation repaired: ACL restored in place")
	a.Notify(SourceReservation)
	return true
}

// flat writes commands one a string, for a log line.
func flat(cmds [][]string) []string {
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = strings.Join(c, " ")
	}
	return out
}

// submitOf is the submit options of a job's first reservation.
func submitOf(rs []wire.Reservation) string {
	if len(rs) == 0 {
		return ""
	}
	return rs[0].Submit
}

// repairFailed audits and counts a failed repair; lost (the scheduler
// refused) drops the job from the ledger and tells the broker.
func (a *Agent) repairFailed(ctx context.Context, r heldCheck, cmds [][]string, err error, lost bool) {
	a.met.RepairFailed()
	msg := fmt.Sprintf("reservation %s %s (%s); re-creating it failed: %v", ids(r.Entry.Reservations), r.Why, r.Detail, err)
	code := wire.CodeInternal
	if lost {
		code = wire.CodeSchedulerEr
		delete(a.ledger.Jobs, r.Job)
		a.publishJobEvent(wire.JobEvent{Type: wire.TypeJobEvent, Job: r.Job, State: PartLost, Time: a.deps.Now().Unix(), Message: msg})
	}
	a.auditRepair(ctx, r.Job, code, msg, cmds)
	a.log.Error().Str("job", r.Job).Bool("lost", lost).Msg(msg)
}

func (a *Agent) auditRepair(ctx context.Context, job, code, msg string, cmds [][]string) {
	rec := wire.AuditRecord{Action: "repair", Job: job, Actor: a.cfg.Site + " (held reservations check)", Code: code, Message: msg,
		Detail: map[string]any{"commands": cmds}}
	if len(cmds) > 0 {
		rec.Command = cmds[len(cmds)-1]
	}
	if err := a.audit(ctx, rec); err != nil {
		a.log.Error().Err(err).Str("job", job).Msg("audit of repair failed")
	}
}

// PartLost is the job event state of a grid job whose reservation here
// was lost (the scheduler lost it and refused to re-create it): the
// broker plans the job again.
const PartLost = "lost"

// PartRebound is the job event state of a grid job whose reservation here
// was re-created bound to another account (the one its parts were told is
// taken): the event carries the reservations as they are now.
const PartRebound = "rebound"

// jobEventTimeout bounds the wait for the broker's answer to a job event.
const jobEventTimeout = 5 * time.Second

// publishJobEvent sends one job event on the job's subject as a request;
// it counts as reported once the broker answers that it took it
// (wire.JobEventAck). No answer — no broker, or a leaf node whose link to
// the grid is down, where a plain publish would vanish — and a broker
// that could not record it are errors: the caller sends the event again
// later (the broker ignores an event it already has). A failure is logged
// and returned.
func (a *Agent) publishJobEvent(ev wire.JobEvent) error {
	if a.deps.Conn == nil {
		return errors.New("no NATS connection")
	}
	ev.Site = a.cfg.Site
	data, err := json.Marshal(ev)
	var msg *nats.Msg
	if err == nil {
		msg, err = a.deps.Conn.Request(wire.JobEventSubject(ev.Site, ev.Job), data, jobEventTimeout)
	}
	var ack wire.JobEventAck
	if err == nil {
		if err = json.Unmarshal(msg.Data, &ack); err == nil && ack.Code == wire.CodeInternal {
			err = fmt.Errorf("the broker did not record it: %s", ack.Message)
		}
	}
	if err != nil {
		a.log.Warn().Err(err).Str("job", ev.Job).Str("state", ev.State).Msg("job event not taken by the broker; sent again later")
	}
	return err
}

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

// GridJobNamer is implemented by reservers that can tell which grid job a
// scheduler reservation belongs to (MauiReserver: "la.<job>.N"). With it,
// the agent follows the local jobs bound to those reservations (qsub -W
// x=FLAGS:ADVRES:<id>) and reports the grid job's part as started and
// finished to the broker.
type GridJobNamer interface {
	JobOf(reservationID string) (job string, ok bool)
}

// gridTracker remembers which grid jobs' parts were running at the last
// snapshot, with their local job ids, and the foreign jobs already
// reported. Not safe for concurrent use (the build loop owns it). With a
// state file (gridstate.go) it survives a restart of the agent.
type gridTracker struct {
	running map[string]bool
	local   map[string][]string // grid job → its local jobs seen running
	// gone holds, after observe, the local jobs of the grid jobs it
	// reported finished; changed says running/local differ from before.
	gone    map[string][]string
	changed bool
	loaded  bool            // the state file was read (once, before the first observe)
	foreign map[string]bool // local ids reported as foreign, while they run
}

// Dispatched knows the parts this agent submitted, by local job id: the
// part follower reports them (followParts), and a grid job with such a
// part has no hand-submitted part.
type Dispatched interface {
	PartOf(localID string) (job string, ok bool)
	HasParts(job string) bool
}

// ForeignJob is a local job running in a grid job's reservation that is
// not its part.
type ForeignJob struct {
	Job         string // the grid job whose reservation it runs in
	Reservation string
	LocalID     string
	User        string
	Account     string
	Name        string
	// Until is when a running one leaves at the latest (its start plus
	// its walltime limit; 0 when either is unknown).
	Until int64
}

// Message is what the grid user and the audit are told.
func (f ForeignJob) Message() string {
	return fmt.Sprintf("%s: local job %s (user %s, account %s, name %s) runs in reservation %s and is not the grid job's part: "+
		"it may take the part's processors; never counted as the part", ForeignFinding, f.LocalID, f.User, f.Account, f.Name, f.Reservation)
}

// ForeignFinding names the finding of a foreign job in a grid reservation.
const ForeignFinding = "foreign job in reservation"

// IsHandPart reports whether local job j, bound to grid job job's
// reservation, proves it is the job's hand-submitted part: it carries the
// part name la.<job>.<N> (wire.PartName) that the reservation's submit
// options give the grid user. Jobs are bound to a reservation by Maui's
// ACL (user and binding account) or by ADVRES; a name is what a stray job
// of the same user does not carry by accident.
func IsHandPart(j forecast.LocalJob, job string) bool {
	pj, _, ok := wire.ParsePartName(j.Name)
	return ok && pj == job
}

// observe compares snap with the last snapshot: a grid job with a running
// part bound to one of its reservations has started; one that was running
// and no longer has any has finished (Torque's completed jobs are not in
// the snapshot). A part is the job this agent dispatched (left to
// followParts, which reports it with its real times and exit status) or,
// for a grid job without dispatched parts, a job that IsHandPart. Every
// other running job bound to a grid reservation is foreign: returned once
// while it runs, never a part. Events are in job order; Site is left to
// the caller.
func (g *gridTracker) observe(snap forecast.Snapshot, namer GridJobNamer, parts Dispatched, now int64) ([]wire.JobEvent, []ForeignJob) {
	running := map[string]bool{}
	local := map[string][]string{}
	var foreign []ForeignJob
	seen := map[string]bool{}
	for _, j := range snap.Jobs {
		if j.Reservation == "" || !j.Running() {
			continue
		}
		job, ok := namer.JobOf(j.Reservation)
		if !ok {
			continue
		}
		if parts != nil {
			if _, mine := parts.PartOf(j.ID); mine {
				continue
			}
		}
		if IsHandPart(j, job) && (parts == nil || !parts.HasParts(job)) {
			running[job] = true
			local[job] = append(local[job], j.ID)
			continue
		}
		seen[j.ID] = true
		if !g.foreign[j.ID] {
			f := ForeignJob{Job: job, Reservation: j.Reservation, LocalID: j.ID, User: j.User, Account: j.Account, Name: j.Name}
			if j.Started > 0 && j.Walltime > 0 {
				f.Until = j.Started + j.Walltime
			}
			foreign = append(foreign, f)
		}
	}
	g.foreign = seen
	var out []wire.JobEvent
	for job := range running {
		if !g.running[job] {
			out = append(out, wire.JobEvent{Type: wire.TypeJobEvent, Job: job, State: "started", Time: now})
		}
	}
	g.gone = map[string][]string{}
	for job := range g.running {
		if !running[job] {
			out = append(out, wire.JobEvent{Type: wire.TypeJobEvent, Job: job, State: "finished", Time: now})
			g.gone[job] = g.local[job]
		}
	}
	slices.SortFunc(out, func(a, b wire.JobEvent) int { return strings.Compare(a.Job, b.Job) })
	slices.SortFunc(foreign, func(a, b ForeignJob) int { return strings.Compare(a.LocalID, b.LocalID) })
	g.changed = !maps.EqualFunc(local, g.local, slices.Equal[[]string])
	g.running, g.local = running, local
	return out, foreign
}

// reportGridJobs publishes what changed for grid jobs since the last
// snapshot, when the reserver can name them, and reports foreign jobs in
// grid reservations. An event the broker did not take (no answer: the
// link to the grid is down) is forgotten by the tracker, so the next
// snapshot reports it again; the ones after it wait too.
func (a *Agent) reportGridJobs(ctx context.Context, snap forecast.Snapshot, now int64) {
	namer, ok := a.deps.Reserver.(GridJobNamer)
	if !ok || a.deps.Conn == nil {
		return
	}
	a.loadGridState()
	var parts Dispatched
	a.resMu.Lock() // the dispatch handler adds parts
	if a.deps.Executor != nil {
		a.loadPartState()
		parts = &a.parts
	}
	evs, foreign := a.grid.observe(snap, namer, parts, now)
	a.holdForeign(ctx, snap, namer, parts, now)
	a.resMu.Unlock()
	a.stampEnds(evs)
	for i, ev := range evs {
		if a.publishJobEvent(ev) != nil {
			a.grid.unreport(evs[i:]) // seen again, and sent, next time
			break
		}
		a.log.Info().Str("job", ev.Job).Str("state", ev.State).Int64("at", ev.Time).Msg("grid job part " + ev.State)
	}
	a.saveGridState()
	for _, f := range foreign {
		a.reportForeign(ctx, f, now)
	}
}

// unreport undoes what observe recorded for events that were not
// reported: a part that started is not running yet, one that finished is
// running still, so the next observe reports each again.
func (g *gridTracker) unreport(evs []wire.JobEvent) {
	for _, ev := range evs {
		switch ev.State {
		case "started":
			delete(g.running, ev.Job)
			delete(g.local, ev.Job)
		case "finished":
			g.running[ev.Job] = true
			g.local[ev.Job] = g.gone[ev.Job]
		}
		g.changed = true
	}
}

// reportForeign tells the broker (the grid user sees it in the job's
// status), the audit trail and the metrics about a foreign job.
func (a *Agent) reportForeign(ctx context.Context, f ForeignJob, now int64) {
	a.met.ForeignJob()
	msg := f.Message()
	a.log.Warn().Str("job", f.Job).Str("local_id", f.LocalID).Str("user", f.User).Str("account", f.Account).
		Str("reservation", f.Reservation).Msg(ForeignFinding)
	_ = a.publishJobEvent(wire.JobEvent{Type: wire.TypeJobEvent, Job: f.Job, State: "foreign", Time: now, LocalID: f.LocalID, Message: msg,
		Until: f.Until})
	if err := a.audit(ctx, wire.AuditRecord{Action: "foreign-job", Job: f.Job, Code: ForeignFinding, Message: msg,
		Detail: f}); err != nil {
		a.log.Error().Err(err).Str("job", f.Job).Msg("audit of foreign job failed")
	}
}

package agent

import (
	"encoding/json"
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
// snapshot, with their local job ids. Not safe for concurrent use (the
// build loop owns it). With a state file (gridstate.go) it survives a
// restart of the agent.
type gridTracker struct {
	running map[string]bool
	local   map[string][]string // grid job → its local jobs seen running
	// gone holds, after observe, the local jobs of the grid jobs it
	// reported finished; changed says running/local differ from before.
	gone    map[string][]string
	changed bool
	loaded  bool // the state file was read (once, before the first observe)
}

// observe compares snap with the last snapshot: a grid job with a running
// local job bound to one of its reservations has started; one that was
// running and no longer has any has finished (Torque's completed jobs are
// not in the snapshot). Jobs skip says are someone else's to report (the
// parts this agent dispatched: followParts reports them with their real
// times and exit status) are left out. Events are in job order; Site is
// left to the caller.
func (g *gridTracker) observe(snap forecast.Snapshot, namer GridJobNamer, skip func(forecast.LocalJob) bool, now int64) []wire.JobEvent {
	running := map[string]bool{}
	local := map[string][]string{}
	for _, j := range snap.Jobs {
		if j.Reservation == "" || !j.Running() || (skip != nil && skip(j)) {
			continue
		}
		if job, ok := namer.JobOf(j.Reservation); ok {
			running[job] = true
			local[job] = append(local[job], j.ID)
		}
	}
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
	g.changed = !maps.EqualFunc(local, g.local, slices.Equal[[]string])
	g.running, g.local = running, local
	return out
}

// reportGridJobs publishes what changed for grid jobs since the last
// snapshot, when the reserver can name them. A failed publish is logged:
// the broker also releases reservations whose job never showed up.
func (a *Agent) reportGridJobs(snap forecast.Snapshot, now int64) {
	namer, ok := a.deps.Reserver.(GridJobNamer)
	if !ok || a.deps.Conn == nil {
		return
	}
	a.loadGridState()
	evs := a.grid.observe(snap, namer, a.dispatchedPart, now)
	a.stampEnds(evs)
	a.saveGridState()
	for _, ev := range evs {
		ev.Site = a.cfg.Site
		data, err := json.Marshal(ev)
		if err == nil {
			err = a.deps.Conn.Publish(wire.JobEventSubject(ev.Site, ev.Job), data)
		}
		if err != nil {
			a.log.Warn().Err(err).Str("job", ev.Job).Str("state", ev.State).Msg("grid job event not published")
			continue
		}
		a.log.Info().Str("job", ev.Job).Str("state", ev.State).Int64("at", ev.Time).Msg("grid job part " + ev.State)
	}
}

// dispatchedPart reports whether j is a part this agent dispatched (named
// la.<job>.<part>) and follows itself, which it does when it can dispatch.
func (a *Agent) dispatchedPart(j forecast.LocalJob) bool {
	if a.deps.Executor == nil {
		return false
	}
	_, _, ok := wire.ParsePartName(j.Name)
	return ok
}

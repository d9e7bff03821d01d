package agent

import (
	"context"
	"fmt"
	"strings"

	"lookahead/torque"
	"lookahead/wire"
)

// partTracker remembers the parts this agent dispatched (local job id →
// grid job) and what was last reported of each. Not safe for concurrent
// use: the build loop and the dispatch handler share it under resMu. With
// Config.PartState it survives a restart of the agent (partstate.go).
type partTracker struct {
	dispatched map[string]string
	reported   map[string]string
	loaded     bool
	// kept is the last completed part's note when its output was not at
	// its -o/-e paths, "" when it was (or none was looked at yet).
	kept string
}

// PartOf is the grid job of a part this agent dispatched.
func (t *partTracker) PartOf(localID string) (string, bool) {
	job, ok := t.dispatched[localID]
	return job, ok
}

// HasParts reports whether the agent dispatched a part of job.
func (t *partTracker) HasParts(job string) bool {
	for _, j := range t.dispatched {
		if j == job {
			return true
		}
	}
	return false
}

// observe compares the batch system's jobs with what was reported: a part
// (a job this agent dispatched, by its local id) seen running for the
// first time has started; one seen completed has finished (exit status
// 0), or failed (another exit status, or none: deleted or aborted before
// it ran). A completed part is reported once, with its real start, end
// and exit status, also when its start was never seen, and with where its
// output is (locate, when not nil). Other jobs, named like parts or not,
// are not parts. Parts no longer listed are forgotten. Site is left to the
// caller.
func (t *partTracker) observe(jobs []torque.BatchJob, now int64, locate func(torque.BatchJob) PartOutput) []wire.JobEvent {
	if t.reported == nil {
		t.reported = map[string]string{}
	}
	listed := map[string]bool{}
	var out []wire.JobEvent
	for _, j := range jobs {
		job, ok := t.dispatched[j.ID]
		if !ok {
			continue
		}
		listed[j.ID] = true
		ev, ok := partEvent(j, job, now)
		if !ok || t.reported[j.ID] == ev.State {
			continue
		}
		if j.Done() && locate != nil && (j.Started != 0 || j.ExitStatus != nil) { // it ran: it has output somewhere
			withOutput(&ev, locate(j))
		}
		out = append(out, ev)
	}
	for id := range t.reported {
		if !listed[id] {
			delete(t.reported, id)
		}
	}
	for id := range t.dispatched {
		if !listed[id] {
			delete(t.dispatched, id)
		}
	}
	return out
}

// markReported records events as reported.
func (t *partTracker) markReported(evs []wire.JobEvent) {
	for _, ev := range evs {
		t.reported[ev.LocalID] = ev.State
	}
}

// partEvent is what to report of one part now (ok false: nothing yet).
func partEvent(j torque.BatchJob, job string, now int64) (wire.JobEvent, bool) {
	ev := wire.JobEvent{Type: wire.TypeJobEvent, Job: job, LocalID: j.ID, Start: j.Started, End: j.Ended, Time: now}
	switch {
	case j.Done() && j.ExitStatus != nil:
		ev.State, ev.ExitStatus = "finished", j.ExitStatus
		if *j.ExitStatus != 0 {
			ev.State, ev.Message = "failed", fmt.Sprintf("%s exited with status %d", j.ID, *j.ExitStatus)
		}
	case j.Done():
		ev.State, ev.Message = "failed", j.ID+" was deleted or aborted before it ran (no exit status)"
	case j.State == "R" || j.State == "E" || j.State == "S":
		ev.State = "started"
	default:
		return ev, false
	}
	if ev.End != 0 {
		ev.Time = ev.End
	} else if ev.Start != 0 {
		ev.Time = ev.Start
	}
	return ev, true
}

// withOutput puts where a completed part's output is into its event: the
// files found, and a note saying whether they are at the -o/-e paths
// (it replaces the dispatch answer's note, which may have said the output
// could stay elsewhere).
func withOutput(ev *wire.JobEvent, po PartOutput) {
	ev.Output, ev.Error = po.Output, po.Error
	note := po.Note
	if note == "" {
		note = "output found at the paths given"
	}
	ev.Message = strings.TrimPrefix(ev.Message+"; "+note, "; ")
}

// followParts reports what changed for dispatched parts since the last
// build, from the Executor's job list. An event counts as reported once
// the broker answered that it took it (publishJobEvent); what was
// reported is then written to Config.PartState before anything else, so
// an agent restarted later re-sends only what may not have arrived. A
// failure is logged, and ends the pass: the next build reports what this
// one missed. The jobs are listed under the request lock, as a dispatch
// submits and records its part under it: a part dispatched while a
// listing ran outside it was missing from that listing and forgotten as
// no longer listed, never reported (its job failed as not started).
func (a *Agent) followParts(ctx context.Context, now int64) {
	if a.deps.Executor == nil || a.deps.Conn == nil {
		return
	}
	a.resMu.Lock()
	defer a.resMu.Unlock()
	jobs, _, err := a.deps.Executor.Jobs(ctx)
	if err != nil {
		a.log.Warn().Err(err).Msg("dispatched parts not followed this time")
		return
	}
	a.loadPartState()
	evs := a.parts.observe(jobs, now, a.outputLocator())
	var sent []wire.JobEvent
	for _, ev := range evs {
		if a.publishJobEvent(ev) != nil {
			break // the grid does not answer: this and the rest next time
		}
		sent = append(sent, ev)
	}
	a.parts.markReported(sent)
	a.savePartState()
	for _, ev := range sent {
		a.log.Info().Str("job", ev.Job).Str("local_id", ev.LocalID).Str("state", ev.State).Int64("start", ev.Start).
			Int64("end", ev.End).Msg("dispatched part " + ev.State)
	}
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"lookahead/torque"
	"lookahead/wire"
)

// partTracker remembers what was last reported of each dispatched part,
// by local job id. Not safe for concurrent use (the build loop owns it).
type partTracker struct{ reported map[string]string }

// observe compares the batch system's jobs with what was reported: a part
// (a job named la.<job>.<part>) seen running for the first time has
// started; one seen completed has finished (exit status 0), or failed
// (another exit status, or none: deleted or aborted before it ran). A
// completed part is reported once, with its real start, end and exit
// status, also when its start was never seen. Parts no longer listed are
// forgotten. Site is left to the caller.
func (t *partTracker) observe(jobs []torque.BatchJob, now int64) []wire.JobEvent {
	if t.reported == nil {
		t.reported = map[string]string{}
	}
	listed := map[string]bool{}
	var out []wire.JobEvent
	for _, j := range jobs {
		job, _, ok := wire.ParsePartName(j.Name)
		if !ok {
			continue
		}
		listed[j.ID] = true
		ev, ok := partEvent(j, job, now)
		if !ok || t.reported[j.ID] == ev.State {
			continue
		}
		t.reported[j.ID] = ev.State
		out = append(out, ev)
	}
	for id := range t.reported {
		if !listed[id] {
			delete(t.reported, id)
		}
	}
	return out
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

// followParts reports what changed for dispatched parts since the last
// build, from the Executor's job list. A failure is logged: the next build
// reports what this one missed.
func (a *Agent) followParts(ctx context.Context, now int64) {
	if a.deps.Executor == nil || a.deps.Conn == nil {
		return
	}
	jobs, _, err := a.deps.Executor.Jobs(ctx)
	if err != nil {
		a.log.Warn().Err(err).Msg("dispatched parts not followed this time")
		return
	}
	for _, ev := range a.parts.observe(jobs, now) {
		ev.Site = a.cfg.Site
		data, err := json.Marshal(ev)
		if err == nil {
			err = a.deps.Conn.Publish(wire.JobEventSubject(ev.Site, ev.Job), data)
		}
		if err != nil {
			a.log.Warn().Err(err).Str("job", ev.Job).Str("state", ev.State).Msg("part event not published")
			delete(a.parts.reported, ev.LocalID) // report it again next time
			continue
		}
		a.log.Info().Str("job", ev.Job).Str("local_id", ev.LocalID).Str("state", ev.State).Int64("start", ev.Start).
			Int64("end", ev.End).Msg("dispatched part " + ev.State)
	}
}

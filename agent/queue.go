package agent

import (
	"cmp"
	"slices"

	"lookahead/forecast"
	"lookahead/wire"
)

// MaxStatusQueue bounds the queued jobs a status reply lists (the reply is
// one NATS message; QueueTotal counts them all).
const MaxStatusQueue = 1000

// QueuedJob is a local job waiting in the scheduler's queue with the
// start the agent's last forecast predicts for it (wire.QueuedJob: the
// status reply's, which the broker's web view reads too).
type QueuedJob = wire.QueuedJob

// queueOf lists snap's waiting jobs with their predicted starts (preds)
// and first predictions (first), soonest predicted start first, jobs
// beyond the horizon last (by submission); at most MaxStatusQueue, and the
// total. A job waiting inside a reservation the snapshot holds (a grid
// job's part submitted ahead of its start) that the forecast did not
// simulate is no local job waiting in the queue: it starts with its
// reservation, and listing it would read "beyond the horizon".
func queueOf(snap forecast.Snapshot, preds []forecast.Prediction, first func(job string) int64) ([]QueuedJob, int) {
	at := make(map[string]forecast.Prediction, len(preds))
	for _, p := range preds {
		at[p.Job] = p
	}
	held := make(map[string]bool, len(snap.Reservations))
	for _, r := range snap.Reservations {
		held[r.ID] = true
	}
	var out []QueuedJob
	for _, j := range snap.Jobs {
		p, predicted := at[j.ID]
		if !j.Waiting() || !predicted && held[j.Reservation] {
			continue
		}
		out = append(out, QueuedJob{Job: j.ID, User: j.User, Queue: j.Queue, Procs: j.Procs, Walltime: j.Walltime,
			Submitted: j.Submitted, Start: p.Start, End: p.End, FirstStart: first(j.ID)})
	}
	slices.SortStableFunc(out, func(a, b QueuedJob) int {
		if (a.Start == 0) != (b.Start == 0) {
			return cmp.Compare(b.Start, a.Start) // predicted before beyond the horizon
		}
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Submitted, b.Submitted), cmp.Compare(a.Job, b.Job))
	})
	total := len(out)
	return out[:min(total, MaxStatusQueue)], total
}

// setQueue keeps the queue of the last build for Status.
func (a *Agent) setQueue(b built) {
	q, total := queueOf(b.snap, b.predictions, a.acc.First)
	a.mu.Lock()
	a.state.Queue, a.state.QueueTotal = q, total
	a.mu.Unlock()
}

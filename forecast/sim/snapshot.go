package sim

import (
	"slices"

	"lookahead/forecast"
)

// Snapshot is the engine's state at Now in the form the Torque adapter
// delivers: the nodes, running jobs (state R, hosts, start), queued jobs
// (state Q) in queue order, and the grid reservations not yet ended. Jobs
// submitted for a later time are not in it.
func (e *Engine) Snapshot() forecast.Snapshot {
	e.compactQueue()
	s := forecast.Snapshot{Site: e.site, Taken: e.now}
	s.Nodes = append([]forecast.SnapshotNode(nil), e.src...)
	for _, j := range e.running {
		lj := localJob(j)
		lj.State, lj.Started, lj.Hosts = forecast.JobRunning, j.start, e.hostList(j.hosts)
		lj.Used = e.now - j.start
		s.Jobs = append(s.Jobs, lj)
	}
	for _, j := range e.queue {
		lj := localJob(j)
		lj.State = forecast.JobQueued
		s.Jobs = append(s.Jobs, lj)
	}
	for _, r := range e.resvs {
		rr := r.r
		rr.Hosts = append([]forecast.HostProcs(nil), rr.Hosts...)
		s.Reservations = append(s.Reservations, rr)
	}
	return s
}

func localJob(j *job) forecast.LocalJob {
	lj := forecast.LocalJob{
		ID: j.ID, User: j.User, Queue: j.Queue, QOS: j.QOS, Procs: j.Procs,
		Walltime: j.Walltime, Submitted: j.Submit, Priority: j.Priority,
		Features: slices.Clone(j.Features),
	}
	if j.PPN > 0 {
		lj.Nodes, lj.PPN = j.Procs/j.PPN, j.PPN
	}
	return lj
}

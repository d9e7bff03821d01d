package slurm

import (
	"strconv"
	"time"

	"lookahead/forecast"
)

// ForecastSnapshot is s as the forecasters read a cluster (the form the
// Torque adapter delivers), taken at now. Pure.
//
//   - Nodes: a node's processors are its CPUs, its memory RealMemory (a
//     grid job's mem_mb is matched against it), its features the active
//     ones (a grid job's --feature); its state comes from its
//     condition, never from idle_cpus (Slurm counts a down node's CPUs as
//     idle): down → down, drained → offline, unknown → state-unknown (none
//     of them is offered), idle → free, mixed/allocated/completing →
//     job-sharing.
//   - Jobs: running and completing jobs hold the cores job_resources lists
//     (their CPUs on their one node otherwise) from their start for their
//     time limit; pending jobs wait with slurmctld's priority, those held
//     (a hold, a dependency, a begin time, an ended reservation) do not;
//     a job bound to a reservation names it; finished jobs are completed.
//   - Reservations are not converted here: they are holds (the agent's
//     HoldLister), so that lookahead's own are told from foreign ones.
func ForecastSnapshot(s Snapshot, site string, now time.Time) forecast.Snapshot {
	out := forecast.Snapshot{Site: site, Taken: now.Unix()}
	for _, n := range s.Nodes {
		out.Nodes = append(out.Nodes, forecast.SnapshotNode{Name: n.Name, Procs: n.CPUs, Speed: 1, MemMB: n.MemMB, Features: n.Features,
			State: []string{nodeState(n)}, Note: string(n.Condition())})
	}
	for _, j := range s.Jobs {
		out.Jobs = append(out.Jobs, localJob(j, now))
	}
	return out
}

// nodeState is the Torque-style state the forecasters read.
func nodeState(n Node) string {
	switch n.Condition() {
	case NodeDown:
		return forecast.NodeDown
	case NodeDrained:
		return forecast.NodeOffline
	case NodeUnknown:
		return forecast.NodeUnknown
	case NodeIdle:
		return forecast.NodeFree
	}
	return forecast.NodeJobSharing
}

// heldReasons are pending reasons that keep a job from being scheduled
// whatever the resources.
var heldReasons = map[string]bool{
	"JobHeldUser": true, "JobHeldAdmin": true, "Dependency": true, "DependencyNeverSatisfied": true,
	"BeginTime": true, "ReservationDeleted": true, "JobArrayTaskLimit": true,
}

func localJob(j Job, now time.Time) forecast.LocalJob {
	lj := forecast.LocalJob{ID: strconv.FormatInt(j.ID, 10), Name: j.Name, User: j.User, Account: j.Account,
		Queue: j.Partition, QOS: j.QOS, Procs: j.CPUs, Priority: j.Priority, Reservation: j.Reservation,
		Submitted: j.Submit.Unix(), State: TorqueState(j)}
	if j.Submit.IsZero() {
		lj.Submitted = 0
	}
	if j.TimeLimit != nil {
		lj.Walltime = int64(*j.TimeLimit / time.Second)
	}
	if lj.State == forecast.JobRunning && j.Start != nil {
		lj.Started = j.Start.Unix()
		lj.Used = max(now.Unix()-lj.Started, 0)
		lj.Hosts = hosts(j)
	}
	return lj
}

// TorqueState maps Slurm's job state to the Torque letter the
// forecasters and the part follower know.
func TorqueState(j Job) string {
	switch j.State {
	case "RUNNING", "CONFIGURING", "COMPLETING", "STOPPED":
		return forecast.JobRunning
	case "SUSPENDED":
		return forecast.JobSuspended
	case "PENDING", "REQUEUED":
		if heldReasons[j.Reason] {
			return forecast.JobHeld
		}
		return forecast.JobQueued
	case "RESV_DEL_HOLD", "REQUEUE_HOLD", "SPECIAL_EXIT":
		return forecast.JobHeld
	}
	return forecast.JobCompleted // COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL, PREEMPTED, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE
}

// hosts is where a running job runs: job_resources per node, or its CPUs
// spread over the nodes of its hostlist.
func hosts(j Job) []forecast.HostProcs {
	var out []forecast.HostProcs
	for _, a := range j.Alloc {
		out = append(out, forecast.HostProcs{Node: a.Node, Procs: a.CPUs})
	}
	if len(out) > 0 || j.Nodes == "" {
		return out
	}
	names, err := ExpandHostlist(j.Nodes)
	if err != nil || len(names) == 0 {
		return nil
	}
	per, extra := j.CPUs/len(names), j.CPUs%len(names)
	for i, n := range names {
		p := per
		if i < extra {
			p++
		}
		if p > 0 {
			out = append(out, forecast.HostProcs{Node: n, Procs: p})
		}
	}
	return out
}

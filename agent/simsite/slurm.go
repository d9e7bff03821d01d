package simsite

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/slurm"
	"lookahead/torque"
	"lookahead/wire"
)

// SlurmCluster is a simulated site answering as a Slurm cluster does, in
// the slurm package's terms (agent.SlurmClient): the demo's Slurm-kind site
// runs the agent's real Slurm adapter (agent.SlurmSite: reservation names,
// sbatch submissions, part following) over it. Reservations and parts
// live in the Site; Slurm's rules that matter to the adapter are kept: a
// reservation name is unique (Exists), one with queued jobs cannot be
// deleted (InUse), job ids are numbers, a finished job's exit code is a
// wait status, a job cancelled before it ran has no nodes.
type SlurmCluster struct {
	Site *Site
}

var _ agent.SlurmClient = SlurmCluster{}

// partIDBase keeps part ids apart from the workload's job numbers.
const partIDBase = 1_000_000_000

// Location: the simulated cluster prints times in UTC.
func (c SlurmCluster) Location() *time.Location { return time.UTC }

// Nodes are the site's nodes.
func (c SlurmCluster) Nodes(ctx context.Context) ([]slurm.Node, error) {
	snap, err := c.Site.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]slurm.Node, 0, len(snap.Nodes))
	for _, n := range snap.Nodes {
		st := "idle"
		if !n.Usable() {
			st = "down"
		}
		out = append(out, slurm.Node{Name: n.Name, State: st, CPUs: n.Procs, Partitions: []string{"batch"}})
	}
	return out, nil
}

// Reservations are the site's reservations under their Slurm names.
func (c SlurmCluster) Reservations(ctx context.Context) ([]slurm.Reservation, error) {
	ws, err := c.Site.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]slurm.Reservation, 0, len(ws))
	for _, w := range ws {
		r := slurm.Reservation{Name: w.Job, Start: time.Unix(w.Start, 0).UTC(), End: time.Unix(w.End, 0).UTC(), State: "INACTIVE",
			Users: []string{w.Identity.User}, NodeCount: len(w.Nodes)}
		var names []string
		for _, n := range w.Nodes {
			names = append(names, n.Node)
			r.CoreCount += n.Procs
			r.Cores = append(r.Cores, slurm.NodeCores{Node: n.Node, CoreIDs: fmt.Sprintf("0-%d", n.Procs-1)})
		}
		r.Nodes = strings.Join(names, ",")
		out = append(out, r)
	}
	return out, nil
}

// CreateReservation holds spec's cores on its nodes for its users[0].
func (c SlurmCluster) CreateReservation(ctx context.Context, spec slurm.ReservationSpec) (slurm.Answer, error) {
	rs, err := c.Reservations(ctx)
	if err != nil {
		return slurm.Answer{}, err
	}
	for _, r := range rs {
		if r.Name == spec.Name {
			return slurm.Answer{Code: slurm.Exists, Reason: "Duplicate reservation name"}, nil
		}
	}
	nodes := strings.Split(spec.Nodes, ",")
	if len(nodes) != len(spec.CoreCounts) || len(spec.Users) != 1 || spec.End.IsZero() {
		return slurm.Answer{}, fmt.Errorf("simulated slurm: a reservation needs one user, nodes with their core counts and an end")
	}
	rq := agent.ReserveSpec{Job: spec.Name, Start: spec.Start.Unix(), End: spec.End.Unix(), Identity: wire.Identity{User: spec.Users[0]}}
	for i, n := range nodes {
		rq.Nodes = append(rq.Nodes, wire.NodeProcs{Node: n, Procs: spec.CoreCounts[i]})
	}
	if _, err := c.Site.Reserve(ctx, rq); err != nil {
		if errors.Is(err, agent.ErrScheduler) {
			return slurm.Answer{Code: slurm.NodesBusy, Reason: "Requested nodes are busy"}, nil
		}
		return slurm.Answer{}, err
	}
	return slurm.Answer{Code: slurm.Created}, nil
}

// DeleteReservation deletes a reservation without queued jobs.
func (c SlurmCluster) DeleteReservation(ctx context.Context, name string) (slurm.Answer, error) {
	jobs, _, err := c.Site.Jobs(ctx)
	if err != nil {
		return slurm.Answer{}, err
	}
	for _, j := range jobs {
		if !j.Done() && j.Reservation == ReservationID(name) {
			return slurm.Answer{Code: slurm.InUse, Reason: "Requested reservation is in use"}, nil
		}
	}
	rel, err := c.Site.Release(ctx, name)
	if err != nil {
		return slurm.Answer{}, err
	}
	if len(rel.IDs) == 0 {
		return slurm.Answer{Code: slurm.NoSuch, Reason: "Requested reservation is invalid"}, nil
	}
	return slurm.Answer{Code: slurm.Deleted}, nil
}

// Submit queues a part into its reservation (its cores, its time limit).
func (c SlurmCluster) Submit(ctx context.Context, spec slurm.SbatchSpec) (string, []string, error) {
	args, err := slurm.SbatchArgs(spec)
	argv := append([]string{"sbatch"}, args...)
	if err != nil {
		return "", argv, err
	}
	q := torque.QsubSpec{User: spec.User, Name: spec.Name, Walltime: int64(spec.TimeLimit / time.Minute * 60),
		Bind: []string{"-W", "x=FLAGS:ADVRES:" + ReservationID(spec.Reservation)}, Output: spec.Output, Error: spec.Error, Script: spec.Script}
	for _, n := range spec.Nodes {
		q.Nodes = append(q.Nodes, forecast.HostProcs{Node: n.Node, Procs: n.CPUs})
	}
	id, _, err := c.Site.Submit(ctx, q)
	if err != nil {
		return "", argv, err
	}
	n, _ := partNumber(id)
	return strconv.FormatInt(n, 10), argv, nil
}

// partNumber is the Slurm job id of a part ("3.<site>" is 1000000003).
func partNumber(id string) (int64, bool) {
	seq, _, _ := strings.Cut(id, ".")
	n, err := strconv.ParseInt(seq, 10, 64)
	return partIDBase + n, err == nil
}

// Jobs lists the parts as squeue --json does.
func (c SlurmCluster) Jobs(ctx context.Context) ([]slurm.Job, []string, error) {
	bs, _, err := c.Site.Jobs(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := make([]slurm.Job, 0, len(bs))
	for _, b := range bs {
		out = append(out, slurmPart(b))
	}
	return out, []string{"squeue", "--json"}, nil
}

func slurmPart(b torque.BatchJob) slurm.Job {
	id, _ := partNumber(b.ID)
	j := slurm.Job{ID: id, Name: b.Name, User: b.User, Reservation: strings.TrimSuffix(b.Reservation, ".0"), Submit: time.Unix(b.Queued, 0).UTC(),
		Output: b.Output, State: "PENDING", Reason: "Reservation"}
	if b.Started > 0 {
		s := time.Unix(b.Started, 0).UTC()
		j.Start, j.State, j.Reason, j.Nodes = &s, "RUNNING", "None", "sim"
	}
	if b.Done() {
		j.State = "CANCELLED"
		if b.Ended > 0 {
			e := time.Unix(b.Ended, 0).UTC()
			j.End = &e
		}
		if b.ExitStatus != nil {
			switch ex := *b.ExitStatus; {
			case ex < 0:
				j.State, j.ExitCode = "TIMEOUT", 15 // killed by SIGTERM at its limit
			case ex > 255:
				j.ExitCode = ex - 256 // deleted while running: killed by a signal
			default:
				j.State, j.ExitCode = "COMPLETED", ex<<8
				if ex != 0 {
					j.State = "FAILED"
				}
			}
		}
	}
	return j
}

// Cancel cancels a part (scancel says nothing for a job it does not know).
func (c SlurmCluster) Cancel(ctx context.Context, id string) ([]string, error) {
	argv := []string{"scancel", id}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < partIDBase {
		return argv, nil
	}
	_, err = c.Site.Delete(ctx, fmt.Sprintf("%d.%s", n-partIDBase, c.Site.cfg.Site))
	if torque.Gone(err) {
		err = nil
	}
	return argv, err
}

// Snapshot is the cluster as sinfo, squeue and scontrol show it: the
// workload's jobs (their numbers) and the parts.
func (c SlurmCluster) Snapshot(ctx context.Context) (slurm.Snapshot, error) {
	var s slurm.Snapshot
	var err error
	if s.Nodes, err = c.Nodes(ctx); err != nil {
		return s, err
	}
	snap, err := c.Site.Snapshot(ctx)
	if err != nil {
		return s, err
	}
	for _, lj := range snap.Jobs {
		if lj.Reservation == "" {
			s.Jobs = append(s.Jobs, slurmLocal(lj))
		}
	}
	parts, _, err := c.Jobs(ctx)
	if err != nil {
		return s, err
	}
	s.Jobs = append(s.Jobs, parts...)
	s.Reservations, err = c.Reservations(ctx)
	return s, err
}

// slurmLocal is a workload job ("<site>.<n>") as squeue shows it.
func slurmLocal(lj forecast.LocalJob) slurm.Job {
	_, num, _ := strings.Cut(lj.ID, ".")
	id, _ := strconv.ParseInt(num, 10, 64)
	limit := time.Duration(lj.Walltime) * time.Second
	j := slurm.Job{ID: id, Name: lj.Name, User: lj.User, Partition: "batch", Priority: lj.Priority, State: "PENDING", Reason: "Priority",
		CPUs: lj.Procs, Submit: time.Unix(lj.Submitted, 0).UTC(), TimeLimit: &limit}
	if lj.Running() {
		s := time.Unix(lj.Started, 0).UTC()
		j.State, j.Reason, j.Start = "RUNNING", "None", &s
		for _, h := range lj.Hosts {
			j.Alloc = append(j.Alloc, slurm.NodeCPUs{Node: h.Node, CPUs: h.Procs})
		}
	}
	return j
}

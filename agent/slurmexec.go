package agent

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"lookahead/forecast"
	"lookahead/slurm"
	"lookahead/torque"
)

var _ Executor = (*SlurmSite)(nil)

// ErrSlurm is the Kind of the torque.CommandError a Slurm client's refusal
// is reported as (the dispatch handler answers scheduler_error for it, as
// for qsub's).
var ErrSlurm = errors.New("slurm refused")

// SbatchOf is the sbatch submission of a part planned by PlanPart: as the
// mapped local user, by the uid the agent's check resolved (sbatch
// --uid=<uid>, run as root; never root itself), into
// the reservation its binding options name, on the reservation's cores,
// with the part's time limit in whole minutes, rounded down (PlanPart has
// already cut it to the reservation's end: Slurm starts a job whose limit
// outruns its reservation, so the cap is ours), its output files, its
// LOOKAHEAD_* variables and nothing else of the agent's environment. Pure.
func SbatchOf(q torque.QsubSpec, partition string) (slurm.SbatchSpec, error) {
	s := slurm.SbatchSpec{User: q.User, UID: q.UID, Name: q.Name, Partition: partition, TimeLimit: time.Duration(q.Walltime) * time.Second,
		Output: stripHost(q.Output), Error: stripHost(q.Error), Script: q.Script}
	for _, b := range q.Bind {
		if r, ok := strings.CutPrefix(b, "--reservation="); ok {
			s.Reservation = r
		}
	}
	if s.Reservation == "" {
		return s, fmt.Errorf("part %s: its reservation's submit options name no --reservation", q.Name)
	}
	for _, n := range q.Nodes {
		s.Nodes = append(s.Nodes, slurm.NodeCPUs{Node: n.Node, CPUs: n.Procs})
	}
	for _, e := range q.Env {
		s.Env = append(s.Env, e.Name+"="+e.Value)
	}
	if s.Output != "" {
		s.Dir = path.Dir(s.Output)
	}
	_, err := slurm.SbatchArgs(s)
	return s, err
}

func stripHost(p string) string {
	if i := strings.IndexByte(p, ':'); i >= 0 && !strings.HasPrefix(p, "/") {
		return p[i+1:]
	}
	return p
}

// Submit submits one part with sbatch, the script on its standard input.
func (s *SlurmSite) Submit(ctx context.Context, q torque.QsubSpec) (string, []string, error) {
	spec, err := SbatchOf(q, s.Partition)
	if err != nil {
		args, _ := slurm.SbatchArgs(spec)
		return "", append([]string{"sbatch"}, args...), err
	}
	id, argv, err := s.Client.Submit(ctx, spec)
	var ce *slurm.CommandError
	if errors.As(err, &ce) {
		err = &torque.CommandError{Command: "sbatch", ExitCode: ce.ExitCode, Stderr: ce.Message, Kind: ErrSlurm}
	}
	return id, argv, err
}

// Jobs lists Slurm's jobs, finished ones included while slurmctld keeps
// them (MinJobAge, default 300 s), as the part follower reads them.
func (s *SlurmSite) Jobs(ctx context.Context) ([]torque.BatchJob, []string, error) {
	jobs, argv, err := s.Client.Jobs(ctx)
	if err != nil {
		return nil, argv, fmt.Errorf("slurm: %w", err)
	}
	out := make([]torque.BatchJob, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, BatchJobOf(j))
	}
	return out, argv, nil
}

// BatchJobOf is a Slurm job as the part follower reads a batch job: a
// finished job's exit status is its exit code (a job killed by a signal
// reports 128+signal, as a shell does); a job cancelled before it ran has
// none. Pure.
func BatchJobOf(j slurm.Job) torque.BatchJob {
	b := torque.BatchJob{ID: strconv.FormatInt(j.ID, 10), Name: j.Name, User: j.User, State: slurm.TorqueState(j),
		Reservation: j.Reservation, Account: j.Account, Queued: unixOrZero(j.Submit), Output: j.Output}
	// A job cancelled before it ran has a start (its cancel time) but no
	// nodes (testdata/squeue-completing.json, jobs 6 and 7).
	if j.Start != nil && j.Nodes != "" && b.State != forecast.JobQueued && b.State != forecast.JobHeld {
		b.Started = j.Start.Unix()
	}
	if b.State == forecast.JobCompleted && b.Started > 0 {
		if j.End != nil {
			b.Ended = j.End.Unix()
		}
		st := slurmExit(j.ExitCode)
		b.ExitStatus = &st
	}
	return b
}

// slurmExit reads exit_code as a wait status: the exit status in its
// high byte, or the signal in its low bits.
func slurmExit(raw int) int {
	if sig := raw & 0x7f; sig != 0 {
		return 128 + sig
	}
	return raw >> 8 & 0xff
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// Delete cancels one job (scancel: a job already gone is not an error).
func (s *SlurmSite) Delete(ctx context.Context, id string) ([]string, error) {
	return s.Client.Cancel(ctx, id)
}

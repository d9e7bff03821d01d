package simsite

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/torque"
)

// part is a grid job's part submitted to the simulated site: a batch job
// bound to one of the site's reservations that starts when the reservation
// does (plus StartDelay) and ends as its script's Behaviour says.
type part struct {
	job      torque.BatchJob
	hosts    []forecast.HostProcs
	walltime int64
	behave   Behaviour
	procs    int
}

// Exit statuses the simulated batch system gives, as Torque does.
const (
	exitWalltime = -11 // JOB_EXEC_OVERLIMIT_WT
	exitDeleted  = 271 // 256 + SIGTERM: deleted while running (captured live)
)

// Submit queues a part the way qsub would: the argument vector is the
// real qsub's, and the part runs as spec.User once its reservation
// (FLAGS:ADVRES in spec.Bind) starts and the user or the -A account
// matches the reservation's ACL; otherwise it stays queued, as under Maui.
func (s *Site) Submit(_ context.Context, spec torque.QsubSpec) (string, []string, error) {
	args, err := torque.QsubArgs(spec)
	if err != nil {
		return "", nil, err
	}
	argv := append([]string{"qsub"}, args...)
	b, err := ParseBehaviour(spec.Script, s.cfg.Site)
	if err != nil {
		return "", argv, &torque.CommandError{Command: strings.Join(argv, " "), ExitCode: 1, Stderr: "simulated site: " + err.Error(), Kind: torque.ErrCommand}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	s.seq++
	p := &part{walltime: spec.Walltime, behave: b, hosts: spec.Nodes}
	for _, h := range spec.Nodes {
		p.procs += h.Procs
	}
	p.job = torque.BatchJob{ID: fmt.Sprintf("%d.%s", s.seq, s.cfg.Site), Name: spec.Name, User: spec.User, State: forecast.JobQueued,
		Reservation: bindArg(spec.Bind, "x=FLAGS:ADVRES:"), Account: optArg(spec.Bind, "-A"), Queued: s.eng.Now(),
		Output: s.cfg.Site + ":" + spec.Output, Error: s.cfg.Site + ":" + spec.Error}
	s.parts = append(s.parts, p)
	s.stepParts()
	return p.job.ID, argv, nil
}

func optArg(args []string, opt string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == opt {
			return args[i+1]
		}
	}
	return ""
}

func bindArg(args []string, prefix string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			return v
		}
	}
	return ""
}

// stepParts moves parts on to the engine's time: queued ones whose
// reservation started (and admits them) start, running ones that reached
// their runtime or walltime end, completed ones are forgotten after
// KeepCompleted. s.mu must be held.
func (s *Site) stepParts() {
	now := s.eng.Now()
	keep := s.parts[:0]
	for _, p := range s.parts {
		if p.job.State == forecast.JobQueued {
			s.maybeStart(p)
		}
		if p.job.State == forecast.JobRunning {
			run, exit := p.runtime()
			if now >= p.job.Started+run {
				p.finish(p.job.Started+run, &exit)
			}
		}
		if p.job.Done() && now >= p.job.Ended+int64(s.cfg.KeepCompleted.Seconds()) {
			continue
		}
		keep = append(keep, p)
	}
	s.parts = keep
}

func (s *Site) maybeStart(p *part) {
	if p.behave.Hold {
		return
	}
	r, ok := s.resv[p.job.Reservation]
	id := s.acl[p.job.Reservation]
	if !ok || (id.User != p.job.User && (id.Account == "" || id.Account != p.job.Account)) {
		return // no such reservation, or its ACL does not admit the part: it waits, as under Maui
	}
	start := max(r.Start, p.job.Queued) + int64(s.cfg.StartDelay.Seconds())
	if s.eng.Now() < start || s.eng.Now() >= r.End {
		return
	}
	p.job.State, p.job.Started = forecast.JobRunning, start
}

// runtime is how long the part runs and how it exits.
func (p *part) runtime() (int64, int) {
	run := int64(p.behave.Runtime.Seconds())
	if run == 0 {
		run = p.walltime
	}
	if run > p.walltime {
		return p.walltime, exitWalltime
	}
	return run, p.behave.Exit
}

func (p *part) finish(at int64, exit *int) {
	p.job.State, p.job.Ended = forecast.JobCompleted, at
	if exit != nil {
		v := *exit
		p.job.ExitStatus = &v
	}
}

// Jobs lists the site's parts as qstat -f -x would: queued, running, and
// completed ones for KeepCompleted.
func (s *Site) Jobs(context.Context) ([]torque.BatchJob, []string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	out := make([]torque.BatchJob, 0, len(s.parts))
	for _, p := range s.parts {
		j := p.job
		if j.ExitStatus != nil {
			v := *j.ExitStatus
			j.ExitStatus = &v
		}
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out, []string{"qstat", "-f", "-x"}, nil
}

// Delete deletes a part as qdel would: a queued one ends without an exit
// status, a running one with 271; a completed or unknown one is refused
// with Torque's exit codes (torque.Gone is true for both).
func (s *Site) Delete(_ context.Context, id string) ([]string, error) {
	argv := []string{"qdel", id}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	for _, p := range s.parts {
		if p.job.ID != id {
			continue
		}
		switch p.job.State {
		case forecast.JobCompleted:
			return argv, &torque.CommandError{Command: "qdel " + id, ExitCode: torque.ExitInvalidState, Kind: torque.ErrInvalidState,
				Stderr: "qdel: Request invalid for state of job MSG=invalid state for job - COMPLETE " + id}
		case forecast.JobRunning:
			exit := exitDeleted
			p.finish(s.eng.Now(), &exit)
		default:
			p.finish(s.eng.Now(), nil)
		}
		return argv, nil
	}
	return argv, &torque.CommandError{Command: "qdel " + id, ExitCode: torque.ExitUnknownJob, Kind: torque.ErrUnknownJob,
		Stderr: "qdel: nonexistent job id: " + id}
}

// partJobs are the parts as the snapshot lists them: queued and running
// batch jobs bound to their reservation. s.mu must be held.
func (s *Site) partJobs() []forecast.LocalJob {
	var out []forecast.LocalJob
	for _, p := range s.parts {
		if p.job.Done() {
			continue
		}
		lj := forecast.LocalJob{ID: p.job.ID, Name: p.job.Name, User: p.job.User, Account: p.job.Account, State: p.job.State,
			Procs: p.procs, Walltime: p.walltime, Submitted: p.job.Queued, Reservation: p.job.Reservation}
		if p.job.State == forecast.JobRunning {
			lj.Started, lj.Used, lj.Hosts = p.job.Started, s.eng.Now()-p.job.Started, p.hosts
		}
		out = append(out, lj)
	}
	return out
}

// JobOf names the grid job of one of the site's reservations (ReservationID).
func (s *Site) JobOf(id string) (string, bool) {
	job, ok := strings.CutSuffix(id, ".0")
	return job, ok && job != ""
}

var (
	_ agent.Executor     = (*Site)(nil)
	_ agent.GridJobNamer = (*Site)(nil)
)

package sim

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"lookahead/forecast"
)

// JobResult is where and when one job ran.
type JobResult struct {
	ID       string               `json:"id"`
	Procs    int                  `json:"procs"`
	Submit   int64                `json:"submit"`
	Start    int64                `json:"start"`
	End      int64                `json:"end"`
	Walltime int64                `json:"walltime"`
	Hosts    []forecast.HostProcs `json:"hosts,omitempty"`
	// Held is the processors the job ran on when fewer than Procs: Maui
	// starts a job of whole chunks per node short of its tasks under
	// LASTAVAILABLE with node policies (docs/simulator.md, "Node
	// policies"); 0 when it held all of Procs.
	Held int `json:"held,omitempty"`
}

// Wait is Start − Submit.
func (r JobResult) Wait() int64 { return r.Start - r.Submit }

// HeldProcs is the processors the job ran on.
func (r JobResult) HeldProcs() int {
	if r.Held > 0 {
		return r.Held
	}
	return r.Procs
}

// Rejection is a job the cluster could not run, and why.
type Rejection struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Result is a whole replay: every job that ran (in the order they ended),
// every rejected job, and the metrics.
type Result struct {
	Jobs     []JobResult `json:"jobs"`
	Rejected []Rejection `json:"rejected,omitempty"`
	// Stuck are jobs still queued when nothing was left to happen (they
	// could never start, e.g. blocked by a reservation that never ends).
	Stuck   []string `json:"stuck,omitempty"`
	Metrics Metrics  `json:"metrics"`
}

// Options tune Run. Progress, when set, is called now and then with the
// number of jobs finished or rejected so far and the total.
type Options struct {
	KeepHosts bool
	Progress  func(done, total int)
}

// Run replays jobs (in any order; each arrives at its Submit) on c under p
// from the earliest submit time and returns every job's schedule and the
// metrics. Errors are for input the simulator cannot take (duplicate ids);
// jobs that cannot run are rejected, not errors.
func Run(c Cluster, jobs []Job, p Policy) (Result, error) {
	return RunWith(c, jobs, p, Options{KeepHosts: true})
}

// RunWith is Run with options.
func RunWith(c Cluster, jobs []Job, p Policy, o Options) (Result, error) {
	return RunContext(context.Background(), c, jobs, p, o)
}

// cancelEvery is how many simulated instants pass between two looks at
// the context.
const cancelEvery = 1024

// RunContext is RunWith that stops when ctx ends: the context is only a
// cancellation check between simulated instants (the replay stays a pure
// computation), and a stopped replay returns ctx's error.
func RunContext(ctx context.Context, c Cluster, jobs []Job, p Policy, o Options) (Result, error) {
	seen := make(map[string]struct{}, len(jobs))
	start := int64(never)
	for _, j := range jobs {
		if _, dup := seen[j.ID]; dup {
			return Result{}, fmt.Errorf("replay: %w", errInvalid("duplicate job id %q", j.ID))
		}
		seen[j.ID] = struct{}{}
		start = min(start, j.Submit)
	}
	if len(jobs) == 0 {
		return Result{}, nil
	}
	e := NewEngine(c, p, start)
	res := Result{Jobs: make([]JobResult, 0, len(jobs))}
	e.quiet = true // results come from onEnd, in the order jobs end
	e.onEnd = func(j *job) {
		r := JobResult{ID: j.ID, Procs: j.Procs, Submit: j.Submit, Start: j.start, End: j.end, Walltime: j.Walltime}
		if held := heldProcs(j.hosts); held < j.Procs {
			r.Held = held
		}
		if o.KeepHosts {
			r.Hosts = e.hostList(j.hosts)
		}
		res.Jobs = append(res.Jobs, r)
	}
	e.submitAll(jobs)
	collect := func(evs []Event) {
		for _, ev := range evs {
			if ev.Kind == Rejected {
				res.Rejected = append(res.Rejected, Rejection{ID: ev.Job, Reason: ev.Reason})
			}
		}
	}
	collect(e.flush())
	done, steps := 0, 0
	for e.step() {
		if steps++; steps%cancelEvery == 0 && ctx.Err() != nil {
			return Result{}, fmt.Errorf("replay stopped after %d of %d jobs: %w", len(res.Jobs)+len(res.Rejected), len(jobs), ctx.Err())
		}
		collect(e.flush())
		if n := len(res.Jobs) + len(res.Rejected); o.Progress != nil && n != done {
			done = n
			o.Progress(n, len(jobs))
		}
	}
	collect(e.flush())
	e.compactQueue()
	for _, j := range e.queue {
		res.Stuck = append(res.Stuck, j.ID)
	}
	res.Metrics = Measure(res.Jobs, e.total)
	res.Metrics.Rejected = len(res.Rejected)
	return res, nil
}

// step runs the pending pass and applies the next instant; false when
// nothing is left to happen.
func (e *Engine) step() bool {
	if e.dirty {
		e.schedule()
		e.dirty = false
	}
	next, ok := e.next()
	if !ok {
		return false
	}
	e.now = max(e.now, next)
	e.apply()
	return true
}

// submitAll is Submit for every job, in order, with the accepted ones kept
// in one block (by arrival, in Submit's order among equals) and fed to
// pending as they come due instead of all at once.
func (e *Engine) submitAll(jobs []Job) {
	block, n := make([]job, len(jobs)), 0
	for _, j := range jobs {
		if e.admit(j, &block[n]) {
			n++
		}
	}
	block = block[:n]
	e.feed = make([]*job, len(block))
	for i := range block {
		e.feed[i] = &block[i]
	}
	slices.SortFunc(e.feed, func(a, b *job) int {
		if a.arrive != b.arrive {
			return cmp.Compare(a.arrive, b.arrive)
		}
		return cmp.Compare(a.seq, b.seq)
	})
}

// heldProcs is the processors of hosts.
func heldProcs(hosts []hostUse) int {
	n := 0
	for _, h := range hosts {
		n += h.procs
	}
	return n
}

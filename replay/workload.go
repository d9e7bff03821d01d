package replay

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"lookahead/forecast"
)

// TraceJob is one job of a workload trace as the CLI reads it (SWF): Submit
// is counted from the trace's start; Walltime ≤ 0 means unknown (the run
// time is used).
type TraceJob struct {
	ID       string
	Submit   int64
	Run      int64
	Walltime int64
	Procs    int
	User     string
}

// Inputs are the traces a scenario names, keyed by the path exactly as the
// scenario writes it. Origins are their wall clocks, keyed the same way:
// the Unix time of each trace's time 0 (its SWF header's UnixStartTime; a
// trace missing here counts from 0).
type Inputs struct {
	Traces  map[string][]TraceJob
	Origins map[string]int64
}

// OnClock puts the scenario on its traces' wall clock (docs/simulator.md,
// "The wall clock"): a scenario without a start (0) starts when the first
// job it replays from the first trace it names (the shared local trace,
// else the grid's, else the first site's) was submitted on its trace's
// clock, so that every stream shifted to Start keeps the time of day and
// week it had. A scenario with a start, or naming no trace, is kept.
func (s Scenario) OnClock(in Inputs) Scenario {
	if s.Start != 0 {
		return s
	}
	type named struct {
		path string
		skip int
	}
	paths := []named{{s.Local.Trace, s.Local.Skip}, {s.Grid.Trace, s.Grid.Skip}}
	for _, site := range s.Sites {
		paths = append(paths, named{site.Trace, s.Local.Skip})
	}
	for _, p := range paths {
		if jobs := in.Traces[p.path]; p.path != "" && p.skip < len(jobs) {
			s.Start = in.Origins[p.path] + jobs[p.skip].Submit
			return s
		}
	}
	return s
}

// GridJob is a grid job of the replay: the request the broker sees, the run
// time on the reference CPU it really takes, and its deadline (0: none).
type GridJob struct {
	Req      forecast.JobRequest
	Run      int64
	Deadline int64
}

// Workload is what a run replays: each site's local jobs (submit times
// shifted to the scenario start) and the grid stream, both in submit order.
type Workload struct {
	Local   [][]TraceJob
	Grid    []GridJob
	Dropped int // jobs left out: wider than allowed (drop rule), bad run time, wider than every site
}

// Random streams, one per purpose, so that changing one rule does not move
// the draws of another.
const (
	streamSplit = iota + 1
	streamShare
	streamPayment
	streamRedraw
	streamSynthetic
)

func rng(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// BuildWorkload turns the scenario's traces into the streams of one run.
// It is deterministic in the scenario's seed: every strategy of a study sees
// the same jobs.
func BuildWorkload(s Scenario, in Inputs) (Workload, error) {
	w := Workload{Local: make([][]TraceJob, len(s.Sites))}
	for i, site := range s.Sites {
		if site.Trace == "" {
			continue
		}
		jobs, err := slice(in, site.Trace, s.Local.Skip, s.Local.Jobs)
		if err != nil {
			return Workload{}, fmt.Errorf("site %s: %w", site.Name, err)
		}
		w.Local[i] = w.keep(shift(jobs, s.Start, s.Local.TimeScale), s.Local.MaxWidth, s.Local.WidthRule, site.Nodes*site.PPN)
	}
	if s.Local.Trace != "" {
		if err := w.splitShared(s, in); err != nil {
			return Workload{}, err
		}
	}
	if err := w.addGrid(s, in); err != nil {
		return Workload{}, err
	}
	return w, nil
}

func slice(in Inputs, path string, skip, n int) ([]TraceJob, error) {
	jobs, ok := in.Traces[path]
	if !ok {
		return nil, fmt.Errorf("trace %q was not loaded", path)
	}
	if skip > len(jobs) {
		skip = len(jobs)
	}
	jobs = jobs[skip:]
	if n > 0 && n < len(jobs) {
		jobs = jobs[:n]
	}
	return jobs, nil
}

// shift moves submit times so the first job is submitted at start, scaled.
func shift(jobs []TraceJob, start int64, scale float64) []TraceJob {
	out := make([]TraceJob, len(jobs))
	if len(jobs) == 0 {
		return out
	}
	first := jobs[0].Submit
	for i, j := range jobs {
		j.Submit = start + int64(float64(j.Submit-first)*scale)
		out[i] = j
	}
	return out
}

// keep applies the width rule and drops jobs that cannot run (negative run
// time, wider than limit), counting them.
func (w *Workload) keep(jobs []TraceJob, maxWidth int, rule string, limit int) []TraceJob {
	out := jobs[:0:0]
	for _, j := range jobs {
		j, ok := fitWidth(j, maxWidth, rule)
		if !ok || j.Run < 0 || j.Procs <= 0 || (limit > 0 && j.Procs > limit) {
			w.Dropped++
			continue
		}
		if j.Walltime <= 0 {
			j.Walltime = max(j.Run, 1)
		}
		out = append(out, j)
	}
	return out
}

func fitWidth(j TraceJob, maxWidth int, rule string) (TraceJob, bool) {
	if maxWidth <= 0 || j.Procs <= maxWidth {
		return j, true
	}
	if rule == WidthDrop {
		return j, false
	}
	j.Procs = maxWidth
	return j, true
}

// splitShared gives each job of the shared trace to the grid (probability
// grid.share) or to a site drawn with probability proportional to its
// processors among the sites wide enough for it.
func (w *Workload) splitShared(s Scenario, in Inputs) error {
	jobs, err := slice(in, s.Local.Trace, s.Local.Skip, s.Local.Jobs)
	if err != nil {
		return fmt.Errorf("local: %w", err)
	}
	jobs = w.keep(shift(jobs, s.Start, s.Local.TimeScale), s.Local.MaxWidth, s.Local.WidthRule, 0)
	split, share := rng(s.Seed, streamSplit), rng(s.Seed, streamShare)
	var grid []TraceJob
	for _, j := range jobs {
		if share.Float64() < s.Grid.Share {
			grid = append(grid, j)
			continue
		}
		site := pickSite(split, s.Sites, j.Procs)
		if site < 0 {
			w.Dropped++
			continue
		}
		w.Local[site] = append(w.Local[site], j)
	}
	w.Grid = append(w.Grid, w.gridJobs(s, grid)...)
	return nil
}

func pickSite(r *rand.Rand, sites []SiteSpec, procs int) int {
	total := 0
	for _, s := range sites {
		if s.Trace == "" && s.Nodes*s.PPN >= procs {
			total += s.Nodes * s.PPN
		}
	}
	if total == 0 {
		return -1
	}
	x := r.IntN(total)
	for i, s := range sites {
		if s.Trace != "" || s.Nodes*s.PPN < procs {
			continue
		}
		if x < s.Nodes*s.PPN {
			return i
		}
		x -= s.Nodes * s.PPN
	}
	return -1
}

func (w *Workload) addGrid(s Scenario, in Inputs) error {
	g := s.Grid
	if g.Trace != "" {
		jobs, err := slice(in, g.Trace, g.Skip, g.Jobs)
		if err != nil {
			return fmt.Errorf("grid: %w", err)
		}
		w.Grid = append(w.Grid, w.gridJobs(s, shift(jobs, s.Start, s.Local.TimeScale))...)
	}
	if g.Synthetic != nil {
		w.Grid = append(w.Grid, w.gridJobs(s, synthetic(s))...)
	}
	sortGrid(w.Grid)
	return nil
}

// gridJobs turns trace jobs into grid requests: width rule, redraw, payment,
// deadline.
func (w *Workload) gridJobs(s Scenario, jobs []TraceJob) []GridJob {
	g := s.Grid
	jobs = w.keep(jobs, g.MaxWidth, g.WidthRule, totalProcs(s.Sites))
	pay, redraw := rng(s.Seed, streamPayment), rng(s.Seed, streamRedraw)
	out := make([]GridJob, 0, len(jobs))
	for _, j := range jobs {
		if g.Redraw != nil {
			j.Procs = redrawWidth(redraw, *g.Redraw)
		}
		wall := j.Walltime
		if g.ExactRuntimes {
			wall = max(j.Run, 1)
		}
		job := GridJob{Run: j.Run, Req: forecast.JobRequest{
			ID: "g" + j.ID, Procs: j.Procs, Walltime: wall, Submitted: j.Submit,
			MaxPrice:  g.Payment.Min + pay.Float64()*(g.Payment.Max-g.Payment.Min),
			Criterion: forecast.EarliestStart, User: j.User, MaxSites: g.MaxSites,
		}}
		if g.Deadline > 0 {
			job.Deadline = j.Submit + g.Deadline.Seconds()
		} else if s.DensityHorizon > 0 {
			job.Deadline = s.Start + s.DensityHorizon.Seconds()
		}
		out = append(out, job)
	}
	return out
}

func redrawWidth(r *rand.Rand, spec RedrawSpec) int {
	if r.Float64() < spec.Share || spec.Min <= 1 {
		return spec.Min + r.IntN(spec.Max-spec.Min+1)
	}
	return 1 + r.IntN(spec.Min-1)
}

// synthetic is seed 004's stream: every job submitted at the start; each
// class gets round(share × jobs) jobs (the last class the rest), in a seeded
// random order.
func synthetic(s Scenario) []TraceJob {
	y := *s.Grid.Synthetic
	r := rng(s.Seed, streamSynthetic)
	classes := make([]WidthClass, 0, y.Jobs)
	for i, c := range y.Classes {
		n := int(c.Share*float64(y.Jobs) + 0.5)
		if i == len(y.Classes)-1 {
			n = y.Jobs - len(classes)
		}
		for k := 0; k < n && len(classes) < y.Jobs; k++ {
			classes = append(classes, c)
		}
	}
	r.Shuffle(len(classes), func(i, j int) { classes[i], classes[j] = classes[j], classes[i] })
	out := make([]TraceJob, 0, len(classes))
	for i, c := range classes {
		run := y.RunMin + r.Int64N(y.RunMax-y.RunMin+1)
		out = append(out, TraceJob{
			ID: fmt.Sprint(i + 1), Submit: s.Start, Run: run, Walltime: run,
			Procs: c.Min + r.IntN(c.Max-c.Min+1),
		})
	}
	return out
}

func sortGrid(jobs []GridJob) {
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Req.Submitted < jobs[b].Req.Submitted })
}

func totalProcs(sites []SiteSpec) int {
	n := 0
	for _, s := range sites {
		n += s.Nodes * s.PPN
	}
	return n
}

package replay

import (
	"context"
	"fmt"
	"sync"

	"lookahead/broker/coalloc"
	"lookahead/forecast"
)

// Options are the machinery a run uses besides the scenario.
type Options struct {
	// NewPool builds the co-allocation pools (nil: CoallocPools).
	NewPool PoolFactory
	// Order is the broker's priority order for the lookahead strategies
	// (nil: coalloc.SortQueue).
	Order func([]forecast.JobRequest) []forecast.JobRequest
	// Progress, when set, is called after each run of a study with the
	// runs done and the total.
	Progress func(done, total int)
	// Context, when set, stops a run between cycles once it is done
	// (the run returns its error).
	Context context.Context
	// Workers is how many runs of a study go at once (< 1: one). The
	// results do not depend on it.
	Workers int
	// Rebuild plans as before the replay kept anything: every cycle from
	// scratch, the per-job strategies with a new pool per job and site set
	// (Env.Rebuild). Slower, the same answers; the tests' reference and
	// the benchmarks' baseline.
	Rebuild bool
}

// Metrics are one run's results (see docs/replay.md for definitions).
type Metrics struct {
	Grid            StreamMetrics `json:"grid"`
	Local           StreamMetrics `json:"local"`
	Utilization     float64       `json:"utilization"`
	SiteUtilization []float64     `json:"site_utilization"`
	Density         float64       `json:"density"`
	DensityT        int64         `json:"density_t"` // T of the density, seconds from start
	Unplaced        int           `json:"unplaced"`  // grid jobs that never found room
	LocalRejected   int           `json:"local_rejected"`
	Dropped         int           `json:"dropped"` // jobs the workload rules left out
	LocalExtraWait  float64       `json:"local_extra_wait"`
	LocalExtraAWWT  float64       `json:"local_extra_awwt"`
	// Credits is what grid users paid: each job the share of its
	// reservation's cost it held (forecast.Charged); Committed is what the
	// reservations cost as made.
	Credits   float64 `json:"credits"`
	Committed float64 `json:"committed"`
	// SiteEarnings is what each site's owner earned from grid jobs (its
	// parts' cost), in scenario order; they add up to Credits.
	SiteEarnings []float64 `json:"site_earnings"`
	Makespan     int64     `json:"makespan"` // last end − start
	// GridClasses is the grid stream by width × run time (classes.go).
	GridClasses []ClassMetrics `json:"grid_classes"`
	// Refused counts grid jobs refused at submit: their walltime is longer
	// than every site's forecast horizon even on its fastest nodes, so no
	// forecast could ever hold them (the broker refuses them too).
	Refused int `json:"refused"`
}

// Result is one run: a strategy at a sweep point.
type Result struct {
	Policy  string      `json:"policy"`
	Point   Point       `json:"point"`
	Label   string      `json:"label,omitempty"`
	Metrics Metrics     `json:"metrics"`
	Checks  Checks      `json:"checks"`
	Stats   Stats       `json:"stats"`
	Records []JobRecord `json:"-"`
}

// RunOnce replays the workload under one strategy. base are the local
// records of the same replay without grid jobs (nil: no extra-wait
// metrics). sc must be validated with defaults filled in.
func RunOnce(sc Scenario, w Workload, policy string, base []JobRecord, opts Options) (Result, error) {
	name, _ := splitPolicy(policy)
	strat, ok := StrategyByName(name)
	if !ok {
		return Result{}, fmt.Errorf("replay: unknown strategy %q", policy)
	}
	sc, err := sc.forPolicy(policy)
	if err != nil {
		return Result{}, fmt.Errorf("replay: %w", err)
	}
	var inc *coalloc.Options
	if opts.NewPool == nil && opts.Order == nil {
		// The co-allocation core in the scenario's queue order: the
		// lookahead strategies may plan with its incremental planner.
		o := coallocOptions(sc)
		inc = &o
	}
	if opts.NewPool == nil {
		opts.NewPool = CoallocPools(sc)
	}
	if opts.Order == nil {
		opts.Order = queueOrder(coallocOptions(sc))
	}
	r, err := newReplayer(sc, w, strat, opts)
	if err != nil {
		return Result{}, err
	}
	r.env.incremental = inc
	if err := r.run(); err != nil {
		return Result{}, fmt.Errorf("replay %s with %s: %w", sc.Name, policy, err)
	}
	r.checks.capacity(r.records, sc.Sites)
	res := Result{Policy: policy, Records: r.records, Checks: r.checks, Stats: r.stats}
	res.Metrics = measure(sc, r.records, base)
	res.Metrics.GridClasses = gridClasses(sc.Sites, w.Grid, r.records)
	res.Metrics.Refused = r.refused
	res.Metrics.Unplaced = len(r.queue) + len(r.pending)
	res.Metrics.LocalRejected = r.rejected
	res.Metrics.Dropped = w.Dropped
	return res, nil
}

// Baseline replays only the local workload (no grid jobs) and returns its
// local job records.
func Baseline(sc Scenario, w Workload, opts Options) ([]JobRecord, error) {
	w.Grid = nil
	res, err := RunOnce(sc, w, NameLookahead, nil, opts)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	return res.Records, nil
}

func measure(sc Scenario, recs, base []JobRecord) Metrics {
	var grid, local []JobRecord
	m := Metrics{SiteEarnings: make([]float64, len(sc.Sites))}
	for _, r := range recs {
		if r.Grid {
			grid = append(grid, r)
			m.Credits += r.Credits
			m.Committed += r.Committed
			for _, p := range r.Parts {
				m.SiteEarnings[p.Site] += p.Credits
			}
		} else {
			local = append(local, r)
		}
	}
	m.Grid, m.Local = Summarize(grid), Summarize(local)
	end := Makespan(recs, sc.Start)
	m.Makespan = end - sc.Start
	capacity := make([]int, len(sc.Sites))
	for i, s := range sc.Sites {
		capacity[i] = s.Nodes * s.PPN
	}
	m.SiteUtilization, m.Utilization = Utilization(recs, capacity, sc.Start, end)
	m.DensityT = sc.DensityHorizon.Seconds()
	if m.DensityT == 0 {
		m.DensityT = m.Makespan
	}
	m.Density = Density(recs, totalProcs(sc.Sites), sc.Start, m.DensityT)
	if base != nil {
		m.LocalExtraWait, m.LocalExtraAWWT = ExtraWait(local, base)
	}
	return m
}

// Report is a whole study: every strategy at every sweep point.
type Report struct {
	Scenario string   `json:"scenario"`
	Results  []Result `json:"results"`
}

// Studies runs every strategy at every sweep point of each scenario (e.g.
// one per seed) over the traces in in, validating each first, up to
// opts.Workers runs at a time. Each run is independent and deterministic,
// so the reports are the same, in scenario order, whatever the number of
// workers; Progress is called from one goroutine at a time.
func Studies(scs []Scenario, in Inputs, opts Options) ([]Report, error) {
	var tasks []studyTask
	reps := make([]Report, len(scs))
	for k, sc := range scs {
		sc = sc.OnClock(in).WithDefaults()
		if err := sc.Validate(); err != nil {
			return nil, err
		}
		reps[k].Scenario = sc.Name
		for _, p := range sc.Points() {
			base := &baseline{} // one per point, shared by its strategies
			for _, pol := range sc.Policies {
				tasks = append(tasks, studyTask{study: k, sc: sc.At(p), point: p, policy: pol, noBase: sc.NoBaseline, base: base})
			}
		}
	}
	results, err := runTasks(tasks, in, opts)
	if err != nil {
		return nil, err
	}
	for i, t := range tasks {
		reps[t.study].Results = append(reps[t.study].Results, results[i])
	}
	return reps, nil
}

// studyTask is one run of a study: a strategy at a point.
type studyTask struct {
	study  int
	sc     Scenario
	point  Point
	policy string
	noBase bool
	base   *baseline
}

// baseline is a point's replay without grid jobs, made once for all its
// strategies (it is deterministic: every strategy would get the same).
type baseline struct {
	once sync.Once
	recs []JobRecord
	err  error
}

// run builds the point's workload (it takes milliseconds: rebuilt per
// strategy) and, unless told not to, the point's baseline, then replays
// the strategy.
func (t studyTask) run(in Inputs, opts Options) (Result, error) {
	w, err := BuildWorkload(t.sc, in)
	if err != nil {
		return Result{}, err
	}
	var base []JobRecord
	if !t.noBase {
		t.base.once.Do(func() { t.base.recs, t.base.err = Baseline(t.sc, w, opts) })
		if base, err = t.base.recs, t.base.err; err != nil {
			return Result{}, err
		}
	}
	res, err := RunOnce(t.sc, w, t.policy, base, opts)
	if err != nil {
		return Result{}, err
	}
	res.Point, res.Label = t.point, t.point.Label()
	return res, nil
}

// runTasks runs the tasks on opts.Workers goroutines (at least one) and
// returns their results in task order, or the first error in task order.
func runTasks(tasks []studyTask, in Inputs, opts Options) ([]Result, error) {
	results := make([]Result, len(tasks))
	errs := make([]error, len(tasks))
	next := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	done := 0
	for range max(opts.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], errs[i] = tasks[i].run(in, opts)
				mu.Lock()
				done++
				if opts.Progress != nil {
					opts.Progress(done, len(tasks))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range tasks {
		if opts.Context != nil && opts.Context.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if opts.Context != nil && opts.Context.Err() != nil {
		return nil, opts.Context.Err()
	}
	return results, nil
}

package replay

import "lookahead/forecast"

// Scenario describes one replay study: the sites, their local workloads, the
// grid stream, the broker's parameters, the strategies to compare and the
// parameters to sweep. Every run of a study is the same scenario with one
// strategy and one point of the sweep.
type Scenario struct {
	Name  string `yaml:"name" json:"name"`
	Seed  int64  `yaml:"seed" json:"seed"`
	Start int64  `yaml:"start" json:"start"` // the common start traces are shifted to (Unix seconds)
	// Until stops the replay this long after Start (0: run until every job
	// has ended).
	Until Duration `yaml:"until" json:"until"`
	// DensityHorizon is seed 004's T, counted from Start (0: the run's
	// makespan).
	DensityHorizon Duration `yaml:"density_horizon" json:"density_horizon"`

	Sites    []SiteSpec   `yaml:"sites" json:"sites"`
	Local    LocalSpec    `yaml:"local" json:"local"`
	Grid     GridSpec     `yaml:"grid" json:"grid"`
	Forecast ForecastSpec `yaml:"forecast" json:"forecast"`
	Broker   BrokerSpec   `yaml:"broker" json:"broker"`
	Policies []string     `yaml:"policies" json:"policies"`
	Sweep    SweepSpec    `yaml:"sweep" json:"sweep"`
	Plot     PlotSpec     `yaml:"plot" json:"plot"`
	// NoBaseline skips the extra replay without grid jobs that measures
	// local jobs' extra wait.
	NoBaseline bool `yaml:"no_baseline" json:"no_baseline"`
}

// SiteSpec is one cluster of the grid.
type SiteSpec struct {
	Name  string `yaml:"name" json:"name"`
	Nodes int    `yaml:"nodes" json:"nodes"`
	PPN   int    `yaml:"ppn" json:"ppn"` // processors per node (default 1)
	// Speed is relative to the reference CPU. Heterogeneity is seed 002's
	// runtime multiplier h (speed = 1/h); give one or the other.
	Speed         float64 `yaml:"speed" json:"speed"`
	Heterogeneity float64 `yaml:"heterogeneity" json:"heterogeneity"`
	// Policy is the local scheduler's policy (easy, conservative, fcfs,
	// depth=K; default easy).
	Policy string `yaml:"policy" json:"policy"`
	// Price is the owner's base price for free time (credits per CPU-hour);
	// time a queued local job is forecast to hold is priced by
	// forecast.DefaultPricing scaled to it, unless Pricing gives the owner's
	// full price list (then Price is ignored).
	Price   float64           `yaml:"price" json:"price"`
	Pricing *forecast.Pricing `yaml:"pricing" json:"pricing,omitempty"`
	// Trace is this site's own local workload; when empty the site gets its
	// share of Local.Trace.
	Trace string `yaml:"trace" json:"trace"`
}

// Width rules for jobs wider than a stream's MaxWidth.
const (
	WidthClamp = "clamp" // width = MaxWidth, run time unchanged
	WidthDrop  = "drop"  // the job is left out (counted)
)

// LocalSpec is the trace shared among sites without a trace of their own.
// Jobs of the slice [Skip, Skip+Jobs) that do not go to the grid are given to
// a site drawn with probability proportional to its processors.
type LocalSpec struct {
	Trace     string `yaml:"trace" json:"trace"`
	Skip      int    `yaml:"skip" json:"skip"`
	Jobs      int    `yaml:"jobs" json:"jobs"` // 0: all
	MaxWidth  int    `yaml:"max_width" json:"max_width"`
	WidthRule string `yaml:"width_rule" json:"width_rule"` // clamp (default) or drop
	// TimeScale multiplies submit times after the shift (1 = as traced).
	TimeScale float64 `yaml:"time_scale" json:"time_scale"`
}

// GridSpec is the grid job stream.
type GridSpec struct {
	// Share is the probability that a job of the local trace goes to the
	// grid instead (seeded draw per job).
	Share float64 `yaml:"share" json:"share"`
	// Trace, when set, is a separate trace all of whose slice goes to the
	// grid (Share is then ignored for it).
	Trace     string         `yaml:"trace" json:"trace"`
	Skip      int            `yaml:"skip" json:"skip"`
	Jobs      int            `yaml:"jobs" json:"jobs"`
	MaxWidth  int            `yaml:"max_width" json:"max_width"`
	WidthRule string         `yaml:"width_rule" json:"width_rule"`
	Redraw    *RedrawSpec    `yaml:"redraw" json:"redraw,omitempty"`
	Synthetic *SyntheticSpec `yaml:"synthetic" json:"synthetic,omitempty"`
	Payment   PaymentSpec    `yaml:"payment" json:"payment"`
	// Deadline is the deadline of every grid job, counted from its submit
	// time (0: none); the cheap strategy needs it.
	Deadline Duration `yaml:"deadline" json:"deadline"`
	// MaxSites is every grid job's max_sites (0: any number of sites).
	MaxSites int `yaml:"max_sites" json:"max_sites"`
	// ExactRuntimes makes each grid job's walltime its actual run time.
	ExactRuntimes bool `yaml:"exact_runtimes" json:"exact_runtimes"`
}

// RedrawSpec redraws grid jobs' widths (seed 002's Workload 2): with
// probability Share a width uniform in [Min, Max], else uniform in
// [1, Min-1].
type RedrawSpec struct {
	Share float64 `yaml:"share" json:"share"`
	Min   int     `yaml:"min" json:"min"`
	Max   int     `yaml:"max" json:"max"`
}

// SyntheticSpec is seed 004's job stream: Jobs jobs submitted at the start,
// run times uniform in [RunMin, RunMax] seconds, widths from the classes.
type SyntheticSpec struct {
	Jobs    int          `yaml:"jobs" json:"jobs"`
	RunMin  int64        `yaml:"run_min" json:"run_min"`
	RunMax  int64        `yaml:"run_max" json:"run_max"`
	Classes []WidthClass `yaml:"classes" json:"classes"`
}

// WidthClass is a share of jobs with widths uniform in [Min, Max].
type WidthClass struct {
	Name  string  `yaml:"name" json:"name"`
	Min   int     `yaml:"min" json:"min"`
	Max   int     `yaml:"max" json:"max"`
	Share float64 `yaml:"share" json:"share"`
}

// PaymentSpec is the rule for grid jobs' max price: uniform in [Min, Max].
type PaymentSpec struct {
	Min float64 `yaml:"min" json:"min"`
	Max float64 `yaml:"max" json:"max"`
}

// ForecastSpec is how sites forecast.
type ForecastSpec struct {
	Period  Duration `yaml:"period" json:"period"`   // default 300 s
	Horizon Duration `yaml:"horizon" json:"horizon"` // default 48 h
	// OnEvent also republishes a site's forecast at the first cycle after
	// something happened there (a job ended or started, a reservation was
	// given back), as an agent woken by events does; the broker then
	// wakes at every grid job's end.
	OnEvent bool `yaml:"on_event" json:"on_event"`
}

// BrokerSpec is how the broker plans and commits.
type BrokerSpec struct {
	Cycle           Duration `yaml:"cycle" json:"cycle"`             // default 60 s
	CommitLead      Duration `yaml:"commit_lead" json:"commit_lead"` // default = cycle
	MultiSiteFactor float64  `yaml:"multi_site_factor" json:"multi_site_factor"`
	StagingDelay    Duration `yaml:"staging_delay" json:"staging_delay"`
	// Tiers are coarse speed thresholds for the co-allocation core (empty:
	// one tier per node speed, exact).
	Tiers []float64 `yaml:"tiers" json:"tiers,omitempty"`
	// Order is the lookahead strategies' queue order: "fcfs" (submit
	// time, the broker's default planning.order, as seeds 002 and 004
	// plan and as the per-job strategies always do; the default),
	// "priority" (max price descending, then submit time: the broker's
	// planning.order price) or "aging".
	Order string `yaml:"order" json:"order,omitempty"`
	// Aging is order aging's rate: how much earlier than its submit time a
	// job counts in the queue per credit of its max price.
	Aging Duration `yaml:"aging" json:"aging,omitempty"`
	// Tolerance is the least-held criterion's tolerance, a fraction of a
	// job's walltime (unset: coalloc.DefaultTolerance).
	Tolerance *float64 `yaml:"tolerance" json:"tolerance,omitempty"`
	// FreeTolerance is the free-first criterion's window for free time, a
	// fraction of a job's walltime (unset: coalloc.DefaultFreeTolerance).
	FreeTolerance *float64 `yaml:"free_tolerance" json:"free_tolerance,omitempty"`
	// FreeWait caps free-first's wait for free time (0: no cap).
	FreeWait Duration `yaml:"free_wait" json:"free_wait,omitempty"`
	// FreeWindow is what free_tolerance counts from: each-cycle (the
	// default) or since-submit (coalloc.Options.FreeWindow).
	FreeWindow string `yaml:"free_window" json:"free_window,omitempty"`
	// FreeFallback: coalloc.Options.FreeFallback (experimental).
	FreeFallback string `yaml:"free_fallback" json:"free_fallback,omitempty"`
	// HoldFree reserves a plan on free time at once, however far ahead it
	// starts, instead of at the commit lead (experimental).
	HoldFree bool `yaml:"hold_free" json:"hold_free,omitempty"`
	// SplitBacklog widens least-held's window for one site by the grid's
	// backlog (coalloc.Options.SplitBacklog; unset or 0: off).
	SplitBacklog *float64 `yaml:"split_backlog" json:"split_backlog,omitempty"`
}

// SweepSpec lists values to sweep; every combination is run with every
// strategy. An empty list keeps the scenario's value.
type SweepSpec struct {
	MultiSiteFactor []float64      `yaml:"multi_site_factor" json:"multi_site_factor,omitempty"`
	SitePolicy      []string       `yaml:"site_policy" json:"site_policy,omitempty"`
	Heterogeneity   [][]float64    `yaml:"heterogeneity" json:"heterogeneity,omitempty"`
	Mix             [][]WidthClass `yaml:"mix" json:"mix,omitempty"`
	Redraw          []*RedrawSpec  `yaml:"redraw" json:"redraw,omitempty"`
	// Payment sweeps what grid users pay (max price, credits per CPU-hour):
	// the price sweep of docs/replay.md.
	Payment []PaymentSpec `yaml:"payment" json:"payment,omitempty"`
}

// PlotSpec chooses the Gantt window of --plot.
type PlotSpec struct {
	Policy string   `yaml:"policy" json:"policy"` // default: the first strategy
	From   Duration `yaml:"from" json:"from"`     // counted from Start
	Length Duration `yaml:"length" json:"length"` // default 1 day
}

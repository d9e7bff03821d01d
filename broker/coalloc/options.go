package coalloc

import (
	"cmp"
	"fmt"
	"math"

	"lookahead/forecast"
)

// maxDuration bounds every duration and instant the planner computes, so
// that start+duration never overflows int64 (about 36 billion years).
const maxDuration = int64(1) << 60

// Options tune the planner. The zero value plans with exact speed tiers, no
// multi-site penalty and no lower bound on starts.
type Options struct {
	// Tiers are speed thresholds. Empty means one tier per distinct speed
	// among the nodes a job may use, which makes the answer exact (optimal
	// by the job's criterion). Configured tiers are coarser and cheaper
	// (one sweep per tier): each threshold t plans with the nodes of speed
	// >= t as if they all ran at the slowest of them, the slowest usable
	// speed is always a tier, and when no coarse tier fits the job the exact
	// tiers are tried, so coarse tiers may cost optimality, never a fit.
	// Values must be finite and > 0.
	Tiers []float64
	// MultiSiteFactor multiplies a job's runtime when its allocation spans
	// more than one site (slower interconnect). 0 or 1 means none; otherwise
	// it must be > 1.
	MultiSiteFactor float64
	// StagingDelay is added, per remote site, to the interval an allocation
	// spanning several sites holds: with m > 1 sites the processors are held
	// from Start for (m-1)*StagingDelay seconds of staging before the job
	// runs. 0 means none; it must be >= 0.
	StagingDelay int64
	// NotBefore is the earliest instant an allocation may start (e.g. now).
	// Slot time before it is ignored.
	NotBefore int64
	// Criterion is the criterion of jobs that omit one; "" means
	// forecast.DefaultCriterion (free-first).
	Criterion string
	// Tolerance is how much later than the earliest possible finish a
	// least-held allocation may finish, as a fraction of the job's
	// walltime: 0.5 accepts finishing half a walltime later to hold fewer
	// processor-seconds. 0 means no later at all. It must be in [0, 100].
	Tolerance float64
	// FreeTolerance is how much later than the earliest possible finish
	// (at the job's max_price) a free-first allocation on free time alone
	// may finish, as a fraction of the job's walltime: free time is
	// preferred when it finishes within it (freefirst.go). 0 means no
	// later at all. It must be in [0, 100].
	FreeTolerance float64
	// FreeWait, when > 0, caps free-first's wait for free time in seconds:
	// free time is preferred only when it finishes at most FreeWait after
	// the earliest finish (and within FreeTolerance × walltime).
	FreeWait int64
	// FreeWindow says what FreeTolerance counts from: FreeWindowEachCycle
	// ("" too) after each cycle's earliest finish, so a job re-planned
	// cycle after cycle may wait longer than that in all; or
	// FreeWindowSinceSubmit, where the time since the job was submitted
	// (NotBefore − Submitted) is spent from the window, so it waits for
	// free time at most FreeTolerance × walltime past its earliest finish
	// in all (docs/coalloc.md, "The free window").
	FreeWindow string
	// FreeFallback is how free-first ranks when free time cannot finish
	// within its window: FreeFallbackLeastHeld (least-held at max_price:
	// the least work, then the earliest finish) or FreeFallbackCheapest
	// (the cheapest allocation finishing within Tolerance × walltime of
	// the earliest finish: the least of local jobs' time bought); ""
	// is DefaultFreeFallback.
	FreeFallback string
	// Order is the queue order jobs are planned in, each on what the jobs
	// before it left: OrderFCFS ("" too, DefaultOrder), OrderPrice or
	// OrderAging; OrderArea for studies only.
	Order string
	// Aging is OrderAging's exchange rate, in seconds of waiting per credit
	// per CPU-hour of max_price (> 0 with OrderAging); with OrderArea,
	// seconds per CPU-hour of the job's size (0: by size alone).
	Aging float64
	// SplitBacklog, when > 0, widens least-held's window for holding
	// less work (free-first ranks with it too) to SplitBacklog × (the
	// work a split adds per second of walltime) × the grid's backlog
	// (Backlog), so on a loaded grid a job spans sites only when that
	// saves more than its waste costs the queue (backlog.go). 0 means
	// off, the default of the broker (planning.split_backlog), `lookahead
	// plan` and the replay: on issue 33's study it helps saturated grids
	// and hurt the held-out one (docs/replay.md, "Issue 33's study, fifth
	// round"). It must be in [0, 100].
	SplitBacklog float64
}

// Queue orders (Options.Order).
const (
	// OrderPrice: max_price descending, then submitted, then id: a job
	// paying more is planned first.
	OrderPrice = "price"
	// OrderFCFS: submitted, then id, whatever the price (the default,
	// DefaultOrder).
	OrderFCFS = "fcfs"
	// OrderAging: submitted − Aging × max_price, then submitted, then id:
	// paying Δ credits per CPU-hour more puts a job before the jobs
	// submitted up to Aging × Δ seconds before it, and never further, so
	// no job waits behind one submitted more than Aging × (the spread of
	// max prices) after it.
	OrderAging = "aging"
	// OrderArea (experimental, for studies; the broker's config does not
	// offer it): the largest job first, by processors × walltime, then
	// submitted; with Aging > 0, submitted − Aging × CPU-hours. The grid's
	// area-weighted response time favours it, and it makes small jobs
	// wait: docs/replay.md, "Issue 33's study, fourth round".
	OrderArea = "area"
)

// jobCmp is the comparison of the options' queue order.
func (o Options) jobCmp() func(a, b forecast.JobRequest) int {
	switch o.Order {
	case OrderPrice:
		return queueCmp
	case OrderAging:
		return agingCmp(o.Aging)
	case OrderArea:
		return areaCmp(o.Aging)
	}
	return fcfsCmp // DefaultOrder
}

func agingCmp(rate float64) func(a, b forecast.JobRequest) int {
	return func(a, b forecast.JobRequest) int {
		ka := float64(a.Submitted) - rate*a.MaxPrice
		kb := float64(b.Submitted) - rate*b.MaxPrice
		if c := cmp.Compare(ka, kb); c != 0 {
			return c
		}
		return fcfsCmp(a, b)
	}
}

// areaCmp is OrderArea's comparison at rate seconds per CPU-hour.
func areaCmp(rate float64) func(a, b forecast.JobRequest) int {
	hours := func(j forecast.JobRequest) float64 { return float64(j.Procs) * float64(j.Walltime) / 3600 }
	return func(a, b forecast.JobRequest) int {
		c := cmp.Compare(hours(b), hours(a))
		if rate > 0 {
			c = cmp.Compare(float64(a.Submitted)-rate*hours(a), float64(b.Submitted)-rate*hours(b))
		}
		if c != 0 {
			return c
		}
		return fcfsCmp(a, b)
	}
}

func fcfsCmp(a, b forecast.JobRequest) int {
	if c := cmp.Compare(a.Submitted, b.Submitted); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Free-first's fallbacks (Options.FreeFallback).
const (
	FreeFallbackLeastHeld = "least-held"
	FreeFallbackCheapest  = "cheapest"
	// DefaultFreeFallback is the fallback of Options.FreeFallback "".
	DefaultFreeFallback = FreeFallbackLeastHeld
)

// CheckFreeFallback checks a fallback's name; key names the setting.
func CheckFreeFallback(key, f string) error {
	return checkEither(key, f, FreeFallbackLeastHeld, FreeFallbackCheapest)
}

// checkEither accepts "" (the default), a or b for the setting key.
func checkEither(key, v, a, b string) error {
	if v != "" && v != a && v != b {
		return fmt.Errorf("%w: %s %q: must be %q or %q", forecast.ErrInvalid, key, v, a, b)
	}
	return nil
}

// freeFallback is the options' fallback, "" resolved.
func (o Options) freeFallback() string {
	if o.FreeFallback == "" {
		return DefaultFreeFallback
	}
	return o.FreeFallback
}

// Free windows (Options.FreeWindow).
const (
	FreeWindowEachCycle   = "each-cycle"
	FreeWindowSinceSubmit = "since-submit"
)

// CheckFreeWindow checks a free window's name; key names the setting in
// the error ("planning.free_window", "--free-window").
func CheckFreeWindow(key, w string) error {
	return checkEither(key, w, FreeWindowEachCycle, FreeWindowSinceSubmit)
}

// DefaultTolerance is the Tolerance the broker, `lookahead plan` and the
// replay use unless told otherwise (docs/coalloc.md, "The least-held
// criterion", says how it was chosen).
const DefaultTolerance = 0.5

// DefaultFreeTolerance is the FreeTolerance the broker, `lookahead plan`
// and the replay use unless told otherwise (docs/replay.md, issue 20's
// study, says how it was chosen).
const DefaultFreeTolerance = 2.0

// MaxMultiSiteFactor bounds MultiSiteFactor: a job spanning sites runs
// at most this many times longer (beyond it every multi-site allocation
// is nonsense, and the durations overflow the model's).
const MaxMultiSiteFactor = 100

// Validate checks the options.
func (o Options) Validate() error {
	for i, s := range o.Tiers {
		if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 {
			return fmt.Errorf("%w: tiers[%d]: %v, must be a number > 0", forecast.ErrInvalid, i, s)
		}
	}
	f := o.MultiSiteFactor
	if math.IsNaN(f) || math.IsInf(f, 0) || (f != 0 && f < 1) || f > MaxMultiSiteFactor {
		return fmt.Errorf("%w: multi-site factor %v: must be 0 (none) or lie in [1, %v]", forecast.ErrInvalid, f, MaxMultiSiteFactor)
	}
	if o.Criterion != "" && !forecast.IsCriterion(o.Criterion) {
		return fmt.Errorf("%w: criterion %q: must be one of %v", forecast.ErrInvalid, o.Criterion, forecast.Criteria())
	}
	if t := o.Tolerance; math.IsNaN(t) || t < 0 || t > 100 {
		return fmt.Errorf("%w: tolerance %v: must be a number in [0, 100]", forecast.ErrInvalid, t)
	}
	if o.FreeWait < 0 || o.FreeWait > maxDuration/1024 {
		return fmt.Errorf("%w: free wait %d: must be >= 0 (none) and < 2^50 s", forecast.ErrInvalid, o.FreeWait)
	}
	if err := CheckFreeWindow("free_window", o.FreeWindow); err != nil {
		return err
	}
	if err := CheckFreeFallback("free_fallback", o.FreeFallback); err != nil {
		return err
	}
	if t := o.FreeTolerance; math.IsNaN(t) || t < 0 || t > 100 {
		return fmt.Errorf("%w: free tolerance %v: must be a number in [0, 100]", forecast.ErrInvalid, t)
	}
	if o.Order != "" && o.Order != OrderPrice && o.Order != OrderFCFS && o.Order != OrderAging && o.Order != OrderArea {
		return fmt.Errorf("%w: order %q: must be %q, %q or %q", forecast.ErrInvalid, o.Order, OrderPrice, OrderFCFS, OrderAging)
	}
	if a := o.Aging; math.IsNaN(a) || a < 0 || a > float64(maxDuration) || (o.Order == OrderAging && a == 0) {
		return fmt.Errorf("%w: aging %v: must be a number of seconds per credit, > 0 with order %q", forecast.ErrInvalid, a, OrderAging)
	}
	if b := o.SplitBacklog; math.IsNaN(b) || b < 0 || b > 100 {
		return fmt.Errorf("%w: split backlog %v: must be a number in [0, 100]", forecast.ErrInvalid, b)
	}
	if o.StagingDelay < 0 || o.StagingDelay > maxDuration/1024 {
		return fmt.Errorf("%w: staging delay %d: must be >= 0 and < 2^50 s", forecast.ErrInvalid, o.StagingDelay)
	}
	return nil
}

// Duration is how long an allocation holds its processors: a job of the
// given reference walltime on processors whose slowest speed is slowest,
// spread over sites sites. It is
//
//	⌈walltime / slowest⌉                                        for 1 site,
//	⌈walltime / slowest × MultiSiteFactor⌉ + (sites-1)×StagingDelay  for more,
//
// computed in float64 in that order (MultiSiteFactor 0 counts as 1), capped
// at 2^60 seconds. This is the single definition the planner, its tests and
// any replay use.
func (o Options) Duration(walltime int64, slowest float64, sites int) int64 {
	if slowest <= 0 || math.IsNaN(slowest) {
		return maxDuration
	}
	f := float64(walltime) / slowest
	if sites > 1 && o.MultiSiteFactor > 1 {
		f *= o.MultiSiteFactor
	}
	f = math.Ceil(f)
	if !(f < float64(maxDuration)) {
		return maxDuration
	}
	d := int64(f)
	if sites > 1 && o.StagingDelay > 0 {
		if int64(sites-1) > (maxDuration-d)/o.StagingDelay {
			return maxDuration
		}
		d += int64(sites-1) * o.StagingDelay
	}
	return d
}

func addSat(t, d int64) int64 {
	if t > math.MaxInt64-d {
		return math.MaxInt64
	}
	return t + d
}

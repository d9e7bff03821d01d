package coalloc

import (
	"fmt"
	"math"
	"slices"

	"lookahead/forecast"
)

// Incremental plans a queue cycle after cycle and gives, every cycle, the
// answers PlanQueue would give from scratch on that cycle's input, while
// re-planning only the jobs whose answer may differ. It caches per job the
// answer, the earliest start any of its searches found (lower), how far in
// time its searches read (reach) and the pieces it took. A job keeps its
// cached answer when
//
//   - its request is the same,
//   - time passed but not beyond lower (no feasible allocation of the job
//     started before the new NotBefore, so none was lost), or it did not
//     fit (losing starts never makes a job fit), and
//   - the slots left for it are the same before reach on every node it may
//     use, at every price it may pay; for a job that did not fit, no slot
//     it may use gained processors (losing some never makes it fit); for
//     a placed job, no slot gained and none lost processors inside the
//     window of a search that found a start, on the nodes that search
//     used (keep.go: its candidates and the pick among them are the
//     same).
//
// The last test uses an exact difference (delta.go): the forecasts'
// changes, plus what jobs that left the queue or changed their answer took
// last cycle, minus what they take now, so a job that committed (its hold
// now in the forecast, its placement gone from the queue) changes nothing
// for the jobs after it.
//
// This relies on Place's answer depending only on the slots the job may
// use (nodes meeting its requirements, prices up to its max_price), on the
// nodes, the sites and the options, and on time only through NotBefore
// cutting off starts; and on a job not fitting exactly when it has no
// feasible allocation. TestIncrementalSameAnswers checks it for every
// criterion the forecast package accepts.
//
// Not safe for concurrent use. The forecasts' slices are kept between
// calls: callers must not modify them afterwards.
type Incremental struct {
	opts Options
	prev *memo
}

// Stats says what one Plan call re-planned and why.
type Stats struct {
	Jobs   int
	Reused int // answers kept (re-applied to the pool, or returned as they were)
	// Re-planned, by reason:
	New     int    // not in the last cycle's queue (or its request changed)
	Time    int    // time passed a start its answer depended on
	Changed int    // slots it may use changed
	Full    int    // every job, because of FullWhy
	FullWhy string // first cycle, sites or nodes changed, options, clock went back, the backlog moved
	// Backlog is the backlog the split window planned with (seconds; 0
	// without Options.SplitBacklog).
	Backlog int64
	Skipped int // no sweep: an earlier job it dominates did not fit this cycle
	// Differ counts the re-planned jobs (not new) whose answer changed.
	Differ int
	// Unreached counts the kept answers (in Reused) of jobs whose slots
	// changed, but not within the windows their searches judged starts on
	// (keep.go, windowsUntouched).
	Unreached int
}

// Replanned is the number of jobs planned again this cycle.
func (s Stats) Replanned() int { return s.New + s.Time + s.Changed + s.Full }

// NewIncremental returns a planner with the given options; NotBefore is
// passed to every Plan.
func NewIncremental(opts Options) (*Incremental, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("coalloc options: %w", err)
	}
	opts.Tiers = slices.Clone(opts.Tiers)
	return &Incremental{opts: opts}, nil
}

type memo struct {
	notBefore int64
	sites     []siteMemo
	input     []forecast.JobRequest // the jobs as given (input order)
	out       []forecast.Allocation // their answers, input order
	queue     []entry               // queue order
	// cutAt is cut's answer once cutKnown.
	cutAt    int64
	cutKnown bool
	// backlog is the backlog the answers were planned with (backlog.go).
	backlog int64
}

type siteMemo struct {
	name   string
	nodes  []forecast.Node
	slots  []forecast.Slot
	free   freeOf
	stated float64 // the forecast's free_price (0: not stated)
	held   heldOf  // the split window's count (backlog.go)
}

type entry struct {
	job   forecast.JobRequest
	alloc forecast.Allocation
	lower int64
	reach int64
	taken []taken
	wins  []window // see observer
}

// Plan plans jobs on the forecasts no earlier than notBefore: one
// allocation per job, in input order, the same as PlanQueue's. The error
// is for bad forecasts only; after one, the next call plans from scratch.
// The slice returned is read-only: a call whose input did not change
// returns the one the call before returned.
func (in *Incremental) Plan(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) ([]forecast.Allocation, Stats, error) {
	prev := in.prev
	in.prev = nil
	st := Stats{Jobs: len(jobs)}
	sites := memoSites(fcs, prev, notBefore)
	var backlog int64
	if in.opts.SplitBacklog > 0 { // every answer rests on the backlog (backlog.go)
		if prev == nil {
			backlog = backlogOf(sites, nil, jobs, notBefore)
		} else if backlog = KeptBacklog(prev.backlog, backlogOf(sites, prev.sites, jobs, notBefore), true); backlog != prev.backlog {
			prev = nil
			st.FullWhy = "the backlog moved"
		}
		st.Backlog = backlog
	}
	if prev != nil && !freeMoved(sites, prev.sites) && prev.sameInput(fcs, jobs, notBefore) {
		st.Reused = len(jobs)
		prev.notBefore, prev.sites = notBefore, sites
		in.prev = prev
		return prev.out, st, nil // (shared, read-only: see Plan's doc)
	}
	opts := in.opts
	opts.NotBefore = notBefore
	p, err := NewPool(fcs, opts)
	if err != nil {
		return nil, st, err
	}
	p.backlog = backlog
	w := newWalk(p, prev, fcs, notBefore)
	// free-first answers rest on every owner's free price (see keep)
	w.freeMoved = prev != nil && freeMoved(sites, prev.sites)
	if st.FullWhy == "" {
		st.FullWhy = w.why
	}
	next := w.run(jobs, &st)
	next.sites, next.backlog = sites, backlog
	in.prev = next
	return slices.Clone(next.out), st, nil
}

// sameInput: the same sites, nodes and jobs, the same slots from
// notBefore to the latest reach of the answers (see walk.cut), and time
// did not pass any start a placed job's answer depended on. The walk
// would then find no difference and keep every answer, each at the cost
// it has (its window's slots, and what the jobs before it take there,
// are the same).
func (m *memo) sameInput(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) bool {
	if notBefore < m.notBefore || len(fcs) != len(m.sites) || len(jobs) != len(m.input) {
		return false
	}
	cut := m.cut()
	for i := range fcs {
		s := &m.sites[i]
		if fcs[i].Site != s.name || !sameNodes(fcs[i].Nodes, s.nodes) ||
			(!sameSlots(fcs[i].Slots, s.slots) && !sameIn(s.slots, fcs[i].Slots, notBefore, cut)) {
			return false
		}
	}
	for i := range jobs {
		if !sameJob(jobs[i], m.input[i]) {
			return false
		}
	}
	for i := range m.queue {
		if e := &m.queue[i]; !e.timeValid(notBefore) {
			return false
		}
	}
	return true
}

// cut is the latest reach of the cached answers: what they depend on of
// the slots lies before it. (Computed once: a memo's queue does not
// change.)
func (m *memo) cut() int64 {
	if !m.cutKnown {
		m.cutAt = int64(math.MinInt64)
		for i := range m.queue {
			m.cutAt = max(m.cutAt, m.queue[i].reach)
		}
		m.cutKnown = true
	}
	return m.cutAt
}

// timeValid: time passing to notBefore cannot change the answer.
func (e *entry) timeValid(notBefore int64) bool {
	return !e.alloc.Placed() || e.lower >= notBefore
}

func sameSlots(a, b []forecast.Slot) bool {
	return sameSlice(a, b) || slices.Equal(a, b)
}

func sameNodes(a, b []forecast.Node) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true // the same list, as the broker passes it again
	}
	return slices.EqualFunc(a, b, func(x, y forecast.Node) bool {
		return x.Name == y.Name && x.Procs == y.Procs && x.Speed == y.Speed && x.MemMB == y.MemMB &&
			slices.Equal(x.Features, y.Features)
	})
}

func sameJob(a, b forecast.JobRequest) bool {
	return a.ID == b.ID && a.Procs == b.Procs && a.Walltime == b.Walltime && a.MaxPrice == b.MaxPrice &&
		a.MinSpeed == b.MinSpeed && a.MemMB == b.MemMB && a.Criterion == b.Criterion &&
		a.MaxSites == b.MaxSites && a.User == b.User && a.Account == b.Account &&
		a.Submitted == b.Submitted && a.Deadline == b.Deadline && slices.Equal(a.Features, b.Features)
}

// memoSites keeps the forecasts' names, nodes and slots (references: the
// caller does not modify them), and each site's free price (siteFree),
// taken from prev for a site whose slots are the same slice and whose
// free price has not expired.
func memoSites(fcs []forecast.Forecast, prev *memo, notBefore int64) []siteMemo {
	out := make([]siteMemo, len(fcs))
	for i, f := range fcs {
		out[i] = siteMemo{name: f.Site, nodes: f.Nodes, slots: f.Slots, stated: f.FreePrice}
		if prev != nil && i < len(prev.sites) {
			if old := prev.sites[i]; old.name == f.Site && sameSlice(old.slots, f.Slots) && notBefore < old.free.until {
				out[i].free = old.free
				continue
			}
		}
		out[i].free = siteFree(f.Slots, notBefore)
	}
	return out
}

// freeOf is the lowest price of a site's slots that a pool planning from
// notBefore keeps (those ending after it), and the latest end of a slot at
// that price: the price holds while notBefore stays before it.
type freeOf struct {
	price float64
	until int64
	ok    bool
}

func siteFree(slots []forecast.Slot, notBefore int64) freeOf {
	var f freeOf
	for _, s := range slots {
		switch {
		case s.End <= max(s.Start, notBefore):
		case !f.ok || s.Price < f.price:
			f = freeOf{price: s.Price, until: s.End, ok: true}
		case s.Price == f.price:
			f.until = max(f.until, s.End)
		}
	}
	return f
}

// freeMoved reports whether a site both cycles have has another free price
// (Pool's site.free: the stated one, else the lowest slot price of all),
// on which free-first answers rest.
func freeMoved(now, prev []siteMemo) bool {
	low, was := lowestPrice(now), lowestPrice(prev)
	for _, s := range now {
		k := slices.IndexFunc(prev, func(o siteMemo) bool { return o.name == s.name })
		if k >= 0 && s.freePrice(low) != prev[k].freePrice(was) {
			return true
		}
	}
	return false
}

// freePrice is the site's free price when low is the lowest slot price of
// all sites.
func (s siteMemo) freePrice(low float64) float64 {
	if s.stated != 0 {
		return s.stated
	}
	return low
}

// lowestPrice is the lowest slot price over the sites (the free price of
// a site that states none, see Pool's site.free); -1 when there is none.
func lowestPrice(sites []siteMemo) float64 {
	low := -1.0
	for _, s := range sites {
		if s.free.ok && (low < 0 || s.free.price < low) {
			low = s.free.price
		}
	}
	return low
}

func sameSlice(a, b []forecast.Slot) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// fullWhy is why no cached answer can be kept ("" when some can). Sites
// may come and go (matched by name), but the sites both cycles have must
// keep their order (the node choice breaks ties by it) and their nodes.
func fullWhy(prev *memo, fcs []forecast.Forecast, notBefore int64) string {
	switch {
	case prev == nil:
		return "first cycle"
	case notBefore < prev.notBefore:
		return "clock went back"
	}
	last := -1
	for _, f := range fcs {
		k := slices.IndexFunc(prev.sites, func(s siteMemo) bool { return s.name == f.Site })
		switch {
		case k < 0:
			continue
		case k < last:
			return "sites reordered"
		case !sameNodes(f.Nodes, prev.sites[k].nodes):
			return "nodes changed"
		}
		last = k
	}
	if last < 0 {
		return "no site in common"
	}
	return ""
}

// lowerNone is lower for answers that found no start.
const lowerNone = math.MaxInt64

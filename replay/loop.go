package replay

import (
	"container/heap"
	"context"
	"fmt"
	"math"

	"lookahead/forecast"
	"lookahead/forecast/sim"
)

// Stats count what the machinery did in a run.
type Stats struct {
	Events    int `json:"events"`               // simulator events plus grid starts and ends
	Cycles    int `json:"cycles"`               // planning cycles run
	Forecasts int `json:"forecasts"`            // forecasts built
	Commits   int `json:"commits"`              // grid jobs reserved
	Stale     int `json:"stale"`                // reserve refused by a site (stale forecast); job replanned
	Clipped   int `json:"clipped"`              // grid jobs whose run outlasted the reservation (killed at its end)
	MultiSite int `json:"multi_site"`           // grid jobs that ran on more than one site
	HeldEarly int `json:"held_early,omitempty"` // free-time plans reserved before the commit lead (broker.hold_free)
}

// release is a grid job's end: its reservations are given back.
type release struct {
	at   int64
	job  string
	ids  []string
	site []int
}

type releases []release

func (h releases) Len() int { return len(h) }
func (h releases) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].job < h[b].job
}
func (h releases) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *releases) Push(x any)   { *h = append(*h, x.(release)) }
func (h *releases) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// replayer is one run: one strategy over one scenario point.
type replayer struct {
	sc       Scenario
	strat    Strategy
	env      Env
	sites    []*site
	pending  []GridJob // not yet submitted, in submit order
	queue    []GridJob // waiting at the broker
	rel      releases
	records  []JobRecord
	rejected int
	refused  int   // grid jobs longer than every horizon (see Metrics.Refused)
	lastSub  int64 // last local submit
	checks   Checks
	stats    Stats
	ctx      context.Context
}

func newReplayer(sc Scenario, w Workload, strat Strategy, opts Options) (*replayer, error) {
	r := &replayer{sc: sc, strat: strat, lastSub: sc.Start}
	for _, j := range w.Grid {
		if NeverFits(sc, j) {
			r.refused++
			continue
		}
		r.pending = append(r.pending, j)
	}
	r.env = Env{NewPool: opts.NewPool, Order: opts.Order, Rebuild: opts.Rebuild, split: &splitBacklog{}}
	if len(sc.Broker.Tiers) == 0 {
		// Keeping candidates between cycles is exact only with exact tiers.
		r.env.memo = &planMemo{}
	}
	r.ctx = opts.Context
	for i, spec := range sc.Sites {
		s, err := newSite(i, spec, sc.Start)
		if err != nil {
			return nil, err
		}
		s.submitLocal(w.Local[i])
		for _, j := range w.Local[i] {
			r.lastSub = max(r.lastSub, j.Submit)
		}
		r.sites = append(r.sites, s)
		r.env.Sites = append(r.env.Sites, SiteInfo{Name: spec.Name, Procs: spec.Nodes * spec.PPN, Speed: spec.Speed, Price: s.pricing.Base})
	}
	return r, nil
}

// run drives the replay to the end: cycles while grid jobs wait or are yet
// to come, then drains the sites.
func (r *replayer) run() error {
	t := r.sc.Start
	for {
		next, ok := r.nextCycle(t)
		if !ok || (r.sc.Until > 0 && next > r.sc.Start+r.sc.Until.Seconds()) {
			break
		}
		t = next
		if err := r.stopped(); err != nil {
			return err
		}
		r.advance(t)
		r.admit(t)
		out, err := r.cycle(t)
		if err != nil {
			return err
		}
		if r.stalled(t, out) {
			break
		}
		t = max(t+1, out.wake)
	}
	return r.finish()
}

func (r *replayer) stopped() error {
	if r.ctx == nil {
		return nil
	}
	return r.ctx.Err()
}

// align rounds t up to the cycle grid.
func (r *replayer) align(t int64) int64 {
	c := r.sc.Broker.Cycle.Seconds()
	if t <= r.sc.Start {
		return r.sc.Start
	}
	return r.sc.Start + (t-r.sc.Start+c-1)/c*c
}

// nextCycle is the first cycle at or after t worth running: now when jobs
// wait, else at the next grid submission.
func (r *replayer) nextCycle(t int64) (int64, bool) {
	if len(r.queue) > 0 {
		return r.align(t), true
	}
	if len(r.pending) > 0 {
		return r.align(max(t, r.pending[0].Req.Submitted)), true
	}
	return 0, false
}

// advance moves every site to t, giving back reservations of grid jobs
// that ended on the way, in time order.
func (r *replayer) advance(t int64) {
	for r.rel.Len() > 0 && r.rel[0].at <= t {
		rel := heap.Pop(&r.rel).(release)
		for k, i := range rel.site {
			s := r.sites[i]
			r.collect(s, s.eng.AdvanceTo(rel.at))
			s.eng.Release(rel.ids[k])
			delete(s.ledger, rel.ids[k])
			s.changed = rel.at
		}
		r.stats.Events++
	}
	for _, s := range r.sites {
		r.collect(s, s.eng.AdvanceTo(t))
	}
}

// collect turns simulator events into local job records.
func (r *replayer) collect(s *site, evs []sim.Event) {
	r.stats.Events += len(evs)
	for _, ev := range evs {
		s.changed = max(s.changed, ev.Time)
		switch ev.Kind {
		case sim.Started:
			r.records = append(r.records, JobRecord{
				ID: s.spec.Name + "/" + ev.Job, Submit: s.submit[ev.Job], Start: ev.Start, End: ev.End,
				Parts: []SiteUse{{Site: s.idx, Procs: sumProcs(ev.Hosts), Start: ev.Start, Hosts: ev.Hosts}},
			})
		case sim.Rejected:
			r.rejected++
		}
	}
}

func sumProcs(hs []forecast.HostProcs) int {
	n := 0
	for _, h := range hs {
		n += h.Procs
	}
	return n
}

// admit moves grid jobs submitted by t into the broker's queue.
func (r *replayer) admit(t int64) {
	k := 0
	for k < len(r.pending) && r.pending[k].Req.Submitted <= t {
		k++
	}
	r.queue = append(r.queue, r.pending[:k]...)
	r.pending = r.pending[k:]
}

// cycle refreshes due forecasts, plans the queue and commits what starts
// within the commit lead. It returns the next time worth a cycle: planning
// again on the same forecasts and queue gives the same plan, so the next
// cycle is due only when a forecast is due, a job arrives, a planned start
// comes within the lead, or something was committed.
func (r *replayer) cycle(t int64) (cycleOutcome, error) {
	if len(r.queue) == 0 {
		return cycleOutcome{wake: r.wakeAfter(t, math.MaxInt64)}, nil
	}
	if err := r.refresh(t); err != nil {
		return cycleOutcome{}, err
	}
	r.stats.Cycles++
	fcs := make([]forecast.Forecast, len(r.sites))
	for i, s := range r.sites {
		fcs[i] = s.fc
	}
	allocs, err := r.strat.Plan(t, fcs, r.queue, r.env)
	if err != nil {
		return cycleOutcome{}, fmt.Errorf("cycle at %d: %w", t, err)
	}
	byID := make(map[string]GridJob, len(r.queue))
	for _, j := range r.queue {
		byID[j.Req.ID] = j
	}
	lead := t + r.sc.Broker.CommitLead.Seconds()
	firstLater := int64(math.MaxInt64)
	committed := map[string]bool{}
	verified := fcs
	placed, stale := false, false
	for _, a := range allocs {
		if !a.Placed() {
			continue
		}
		placed = true
		early := a.Start > lead
		if early && !(r.sc.Broker.HoldFree && onFreeTime(verified, a)) {
			firstLater = min(firstLater, a.Start-r.sc.Broker.CommitLead.Seconds())
			continue
		}
		job := byID[a.Job]
		// Law 4: what is committed fits the forecasts the plan was made on,
		// at the price the job pays, given the other commits of the cycle.
		next, err := Consume(verified, a, job.Req.MaxPrice)
		if err != nil {
			r.checks.fail("plan at %d does not fit the forecasts at the price paid: %v", t, err)
			continue
		}
		if r.commit(job, a) {
			if early {
				r.stats.HeldEarly++
			}
			committed[a.Job] = true
			verified = next
		} else {
			stale = true
		}
	}
	r.dropCommitted(committed)
	out := cycleOutcome{placed: placed, committed: len(committed) > 0}
	if out.committed || stale {
		out.wake = t + r.sc.Broker.Cycle.Seconds()
	} else {
		out.wake = r.wakeAfter(t, firstLater)
	}
	return out, nil
}

type cycleOutcome struct {
	wake      int64
	placed    bool
	committed bool
}

// wakeAfter is the earliest of: a planned start coming within the lead, the
// next forecast, the next grid submission (never before t+1).
func (r *replayer) wakeAfter(t, planned int64) int64 {
	next := planned
	for _, s := range r.sites {
		next = min(next, s.built+r.sc.Forecast.Period.Seconds())
	}
	if len(r.pending) > 0 {
		next = min(next, r.pending[0].Req.Submitted)
	}
	if r.sc.Forecast.OnEvent && r.rel.Len() > 0 {
		next = min(next, r.rel[0].at)
	}
	return max(next, t+1)
}

// refresh rebuilds the forecasts that are due (period) or that a
// reservation changed.
func (r *replayer) refresh(t int64) error {
	for _, s := range r.sites {
		changed := r.sc.Forecast.OnEvent && s.changed > s.built
		if s.built >= 0 && !s.dirty && !changed && t < s.built+r.sc.Forecast.Period.Seconds() {
			continue
		}
		if err := s.forecast(t, r.sc.Forecast.Horizon.Seconds(), &r.checks); err != nil {
			return err
		}
		r.stats.Forecasts++
	}
	return nil
}

func (r *replayer) dropCommitted(done map[string]bool) {
	if len(done) == 0 {
		return
	}
	k := 0
	for _, j := range r.queue {
		if !done[j.Req.ID] {
			r.queue[k] = j
			k++
		}
	}
	r.queue = r.queue[:k]
}

// stalled reports that waiting longer cannot help: jobs wait, nothing is
// placed, no grid job will arrive or end, and every site is idle with no
// local job left to come.
func (r *replayer) stalled(t int64, out cycleOutcome) bool {
	if len(r.queue) == 0 || out.placed || len(r.pending) > 0 || r.rel.Len() > 0 || t < r.lastSub {
		return false
	}
	for _, s := range r.sites {
		if s.built < s.changed || s.dirty || !s.idle() {
			return false
		}
	}
	return true
}

// finish gives back every outstanding reservation at its job's end, drains
// the sites and records what never ran.
func (r *replayer) finish() error {
	for r.rel.Len() > 0 {
		r.advance(r.rel[0].at)
	}
	for _, s := range r.sites {
		r.collect(s, s.eng.Drain())
	}
	sortRecords(r.records)
	return nil
}

// onFreeTime reports whether the allocation fits the forecasts' free time
// alone: every part on slots at or below its site's free price.
func onFreeTime(fcs []forecast.Forecast, a forecast.Allocation) bool {
	free := make([]forecast.Forecast, len(fcs))
	for i, f := range fcs {
		free[i] = f
		free[i].Slots = nil
		for _, sl := range f.Slots {
			if sl.Price <= f.FreePrice {
				free[i].Slots = append(free[i].Slots, sl)
			}
		}
	}
	_, err := Consume(free, a, math.Inf(1))
	return err == nil
}

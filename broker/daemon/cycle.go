package daemon

import (
	"context"
	"time"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// Cycle runs one planning cycle now: plan every waiting job on the fresh
// forecasts as they are at its start, publish the plan and reserve the jobs
// due within the commit lead time. Owed releases and no-shows are settled
// first, so a job is never reserved again before its old reservations are
// gone.
// Safe to call while Run runs (tests and the demo drive it directly).
func (b *Broker) Cycle(ctx context.Context) error {
	b.commitMu.Lock()
	defer b.commitMu.Unlock()
	if err := b.settle(ctx); err != nil {
		return err
	}
	now := b.now()
	in, stale, excluded := b.snapshot(now)
	began := time.Now()
	allocs, err := b.parts.PlanCycle(in, b.cfg.Planner)
	took := time.Since(began)
	if err != nil {
		return err
	}
	plan := b.publishPlan(in, stale, excluded, allocs, now, took)
	b.cfg.Metrics.CycleDone(took, b.cfg.Clock.Now(), countPlaced(allocs), len(allocs)-countPlaced(allocs))
	revisions := broker.Revisions(in.Forecasts)
	for i, a := range allocs {
		if !broker.Due(a, now, int64(b.cfg.CommitLead/time.Second)) {
			continue
		}
		if err := b.commit(ctx, in.Jobs[i].ID, a, revisions); err != nil {
			return err
		}
	}
	b.logCycle(plan.Cycle, len(allocs), took)
	b.updateGauges()
	return nil
}

// logCycle logs one line per cycle, and counts, what the planner re-planned
// and why (when it says: Config.PlanStats).
func (b *Broker) logCycle(cycle uint64, jobs int, took time.Duration) {
	if b.cfg.PlanStats == nil {
		b.log.Debug().Uint64("cycle", cycle).Int("jobs", jobs).Dur("took", took).Msg("cycle")
		return
	}
	st := b.cfg.PlanStats()
	why := map[string]int{"new": st.New, "time": st.Time, "changed": st.Changed, "full": st.Full}
	b.cfg.Metrics.Replanned(st.Reused, why)
	b.log.Info().Uint64("cycle", cycle).Int("jobs", jobs).Int("reused", st.Reused).Int("replanned", st.Replanned()).
		Int("new", st.New).Int("time_passed", st.Time).Int("slots_changed", st.Changed).Int("full", st.Full).
		Str("full_why", st.FullWhy).Int("no_sweep", st.Skipped).Dur("took", took).Msg("cycle")
}

func countPlaced(allocs []forecast.Allocation) int {
	n := 0
	for _, a := range allocs {
		if a.Placed() {
			n++
		}
	}
	return n
}

// snapshot takes the cycle's input under the lock: fresh forecasts, holds
// and the waiting jobs, in the planner's queue order (Config.Queue;
// sorted after the lock is released, from one pass over the jobs in
// submission order). Cycle
// commits in this order. Planned starts are kept at least StartMargin
// ahead.
func (b *Broker) snapshot(now int64) (broker.CycleInput, []string, []string) {
	b.mu.Lock()
	fresh, stale, excluded := broker.Fresh(b.siteList(), now, int64(b.cfg.ForecastTTL/time.Second))
	in := broker.CycleInput{Now: now + int64(b.cfg.StartMargin/time.Second), Forecasts: fresh}
	for _, j := range b.state.Jobs() {
		switch {
		case j.State == wire.JobWaiting:
			in.Jobs = append(in.Jobs, j.Req)
			if j.Script != nil { // its parts are dispatched (lifecycle.go)
				if in.Scripted == nil {
					in.Scripted = map[string]bool{}
				}
				in.Scripted[j.Req.ID] = true
			}
		case j.Holds():
			in.Holds = append(in.Holds, j.Hold())
		}
	}
	b.mu.Unlock()
	b.cfg.Queue.SortQueue(in.Jobs)
	return in, stale, excluded
}

func (b *Broker) siteList() []broker.Site {
	out := make([]broker.Site, 0, len(b.sites))
	for _, s := range b.sites {
		out = append(out, *s)
	}
	return out
}

func (b *Broker) publishPlan(in broker.CycleInput, stale, excluded []string, allocs []forecast.Allocation, now int64, took time.Duration) wire.Plan {
	b.mu.Lock()
	plan := wire.Plan{Type: wire.TypePlan, Cycle: b.plan.Cycle + 1, Time: now, Stale: stale, Excluded: excluded,
		Allocations: allocs, Micros: took.Microseconds(), Order: b.order()}
	for _, f := range in.Forecasts {
		plan.Sites = append(plan.Sites, f.Site)
	}
	b.planned = make(map[string]forecast.Allocation, len(allocs))
	b.queuePos = make(map[string]int, len(allocs))
	b.lastIn, b.whys = in, map[string]string{}
	for i, a := range allocs {
		b.planned[a.Job] = a
		b.queuePos[a.Job] = i
		if broker.Due(a, now, int64(b.cfg.CommitLead/time.Second)) {
			plan.Commit = append(plan.Commit, a.Job)
		}
	}
	if plan.Allocations == nil {
		plan.Allocations = []forecast.Allocation{}
	}
	b.plan = plan
	b.mu.Unlock()
	b.publishPage(plan)
	return plan
}

func (b *Broker) updateGauges() {
	b.mu.Lock()
	defer b.mu.Unlock()
	byState := map[string]int{}
	for _, j := range b.state.Jobs() {
		byState[j.State]++
	}
	fresh, stale, excluded := broker.Fresh(b.siteList(), b.now(), int64(b.cfg.ForecastTTL/time.Second))
	b.cfg.Metrics.SetJobs(byState)
	b.cfg.Metrics.SetSites(len(fresh), len(stale)+len(excluded))
}

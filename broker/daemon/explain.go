package daemon

import (
	"fmt"
	"slices"
	"strings"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// ViewExplains is how many explanations one Jobs call computes at most
// (each searches the forecasts for one job, as `lookahead status JOB`
// does); the rest of the rows shown keep the plan's own why until a later
// call explains them. Explanations are kept for the cycle they are of, so
// a page polled every few seconds explains each waiting job once per
// cycle, and status and the web view share them.
const ViewExplains = 20

// explainNoFit says why the job did not fit in the last cycle and what
// would help (Config.Explain on that cycle's forecasts less what reserved
// jobs hold), or, for a job planned to start later than the cycle's now
// plus the start margin, why it cannot start then (Config.ExplainLater),
// naming the sites left out as stale or out of planning; "" when the job
// is not a waiting one of the last cycle, or no explainer is configured.
func (b *Broker) explainNoFit(id string) string {
	why, _, _ := b.explainKept(id, nil)
	return why
}

// explainKept is explainNoFit's answer for id and the cycle it is of,
// computed once per cycle and kept (b.whys, emptied by each new plan).
// With budget set, an answer not kept yet is computed only while
// *budget > 0, which it then decrements; ok is false when none was.
func (b *Broker) explainKept(id string, budget *int) (why string, cycle uint64, ok bool) {
	b.mu.Lock()
	cycle = b.plan.Cycle
	if why, kept := b.whys[id]; kept {
		b.mu.Unlock()
		return why, cycle, true
	}
	a, planned := b.planned[id]
	in, now, stale, out := b.lastIn, b.plan.Time, slices.Clone(b.plan.Stale), slices.Clone(b.plan.Excluded)
	b.mu.Unlock()
	if !planned {
		return "", cycle, true
	}
	if budget != nil {
		if *budget <= 0 {
			return "", cycle, false
		}
		*budget--
	}
	why = b.explain(in, now, a, stale, out) // outside mu: it searches the forecasts
	b.mu.Lock()
	if b.plan.Cycle == cycle {
		b.whys[id] = why
	}
	b.mu.Unlock()
	return why, cycle, true
}

// explain is explainNoFit's answer for allocation a of the cycle at now
// whose input was in. A job planned later also says when it is reserved
// (reservedWhen, with the broker's commit lead).
func (b *Broker) explain(in broker.CycleInput, now int64, a forecast.Allocation, stale, out []string) string {
	later := a.Placed() && a.Start > in.Now
	if (a.Placed() && !later) || (!later && b.cfg.Explain == nil) || (later && b.cfg.ExplainLater == nil) {
		return ""
	}
	k := slices.IndexFunc(in.Jobs, func(j forecast.JobRequest) bool { return j.ID == a.Job })
	if k < 0 || len(in.Forecasts) == 0 {
		return ""
	}
	fcs := broker.ApplyHolds(in.Forecasts, in.Holds, in.Now)
	explain := func(fcs []forecast.Forecast) string { return b.cfg.Explain(fcs, in.Jobs[k], in.Now) }
	if later {
		explain = func(fcs []forecast.Forecast) string {
			why := b.cfg.ExplainLater(fcs, in.Jobs[k], a, in.Now)
			if why == "" {
				return ""
			}
			return why + "; " + reservedWhen(a, now, b.cfg.CommitLead)
		}
	}
	why := ""
	if in.Scripted[a.Job] {
		why = broker.ExplainParts(fcs, explain)
	} else {
		why = explain(fcs)
	}
	if len(stale) > 0 {
		why += fmt.Sprintf("; not planned on (stale forecast): %s", strings.Join(stale, ", "))
	}
	if len(out) > 0 {
		why += fmt.Sprintf("; not planned on (out of planning): %s", strings.Join(out, ", "))
	}
	if later && a.Why != "" {
		why += "; " + a.Why
	}
	return why
}

// explained puts why, when there is one, in place of a's own why: what
// status and the web view show of a waiting job.
func explained(a *forecast.Allocation, why string) {
	if a != nil && why != "" {
		a.Why = why
	}
}

// explainUnplaced explains, for a status list, the first jobs in queue
// order that the last cycle could not place (at most ViewExplains
// computed per call, kept for the cycle as explainKept keeps them); the
// list shows every kept explanation.
func (b *Broker) explainUnplaced() {
	b.mu.Lock()
	var ids []string
	for _, a := range b.plan.Allocations {
		if _, kept := b.whys[a.Job]; a.Error != "" && !kept {
			ids = append(ids, a.Job)
		}
		if len(ids) == ViewExplains {
			break
		}
	}
	b.mu.Unlock()
	budget := ViewExplains
	for _, id := range ids {
		b.explainKept(id, &budget)
	}
}

// explainShown puts into the waiting jobs of jobs (rendered from the plan
// of cycle) their explanations, computing at most ViewExplains of them.
func (b *Broker) explainShown(jobs []wire.JobStatus, cycle uint64) {
	budget := ViewExplains
	for i := range jobs {
		st := &jobs[i]
		if st.State != wire.JobWaiting || st.Plan == nil {
			continue
		}
		why, c, ok := b.explainKept(st.Job.ID, &budget)
		if ok && c == cycle {
			explained(st.Plan, why)
		}
	}
}

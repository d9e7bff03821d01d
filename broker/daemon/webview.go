package daemon

import (
	"context"
	"fmt"
	"sort"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// SiteForecasts is what the broker holds of every site, sorted by name:
// the forecast it plans on (nodes, slots, unmodelled policy settings) and
// when the site last spoke. Read-only: the forecasts are shared with the
// broker, which replaces a site's forecast and never changes one in place;
// callers must not change them either.
func (b *Broker) SiteForecasts() []broker.Site {
	b.mu.Lock()
	out := b.siteList()
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// HAStatus is the broker's own role and the lease as it last read it
// (Leader: the active broker, itself when active), as each broker answers
// `lookahead-broker status`; for a broker that is not active, Message
// says why it does not serve (a standby and which broker is active,
// starting, stepped down). LeaseTTL is left out (the caller's).
func (b *Broker) HAStatus() wire.HAStatus {
	st := wire.HAStatus{Type: wire.TypeHAStatus, Name: b.cfg.Name, Role: wire.RoleStandby}
	if l := b.Leadership(); l != nil {
		st.Role, st.Epoch, st.Since, st.Leader = wire.RoleActive, l.Epoch, l.Since, l
		return st
	}
	st.Message = b.notActive()
	b.term.mu.Lock()
	if h := b.term.holder; h != nil {
		st.Leader = &wire.Leadership{Broker: h.Broker, Epoch: h.Epoch, Since: h.Since}
	}
	b.term.mu.Unlock()
	return st
}

// AgentStatus asks site's agent for its status (the JSON its status
// endpoint answers, as `lookahead-agent status` reads it), on a reply
// subject of the site's own, until ctx ends. It changes nothing, so it is
// asked by a standby too.
func (b *Broker) AgentStatus(ctx context.Context, site string) ([]byte, error) {
	subject := wire.AgentSubject(site, wire.VerbAgentStatus)
	m, err := b.agents.request(ctx, site, subject, nil)
	if err != nil {
		return nil, fmt.Errorf("request to %s: %w", subject, err)
	}
	return m.Data, nil
}

// Jobs renders, for the web view, the jobs keep accepts among every job
// the broker holds (ended ones within retention included), in submission
// order: the first limit of them (limit ≤ 0: all), how many keep accepted
// and how many the broker holds, and the broker's now. keep sees the
// broker's record and, for a waiting job, the last cycle's plan (nil if
// none); it must not keep or change either. One pass under the broker's
// lock, and only the jobs shown are rendered: the status endpoint's pages
// encode every job as JSON and each page walks the queue again, too much
// to poll every 2 s at 100,000 jobs. A waiting job shown says why as
// `lookahead status JOB` does (explainNoFit, at most ViewExplains
// computed per call; see explainShown).
func (b *Broker) Jobs(keep func(j *broker.Job, plan *forecast.Allocation) bool, limit int) (jobs []wire.JobStatus, found, total int, now int64) {
	jobs, found, total, now, cycle := b.jobs(keep, limit)
	b.explainShown(jobs, cycle)
	return jobs, found, total, now
}

// jobs is Jobs without the explanations, and the cycle whose plan it
// rendered.
func (b *Broker) jobs(keep func(j *broker.Job, plan *forecast.Allocation) bool, limit int) (jobs []wire.JobStatus, found, total int, now int64, cycle uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	all := b.state.Jobs()
	jobs = []wire.JobStatus{}
	for _, j := range all {
		var pl *broker.Planned
		if j.State == wire.JobWaiting {
			pl = b.plannedFor(j.Req.ID)
		}
		if keep != nil && !keep(j, pl.Allocation()) {
			continue
		}
		if found++; limit <= 0 || len(jobs) < limit {
			jobs = append(jobs, j.StatusPlanned(pl))
		}
	}
	return jobs, found, len(all), b.now(), b.plan.Cycle
}

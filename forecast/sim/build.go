package sim

import (
	"fmt"
	"slices"
	"strings"

	"lookahead/forecast"
)

// Build forecasts a cluster from a snapshot: it simulates forward from now
// to horizon under policy, assuming every job runs its full walltime, and
// returns the v1 forecast (site from snap.Site, Seq 0: the caller numbers
// forecasts) and each local job's predicted start, end and nodes.
//
//   - Running jobs hold their hosts until Started+Walltime (an overdue job
//     until now; a job without walltime until the horizon; a job without
//     hosts on the first nodes with free processors). A walltime past the
//     model's MaxDuration counts as MaxDuration, so no end overflows.
//   - Queued jobs (state Q) enter at now in the queue order of their
//     priority and submit time; a job without walltime is assumed to run to
//     the horizon. Held, waiting, completed and in-transit jobs (H, W, C,
//     T) are not simulated. A job in a state Torque does not have is taken
//     as running (it holds its processors, the conservative reading) and
//     named in the forecast's Unmodelled lines. Jobs bound to a
//     reservation (LocalJob.Reservation) run inside it and are not
//     simulated either: the reservation holds their processors.
//   - Reservations are taken as they are (the scheduler is the truth); their
//     processors on usable nodes are never offered and local jobs plan
//     around them.
//   - Slots (forecast.BuildSlots): per usable node, [now, horizon) less
//     running jobs and reservations; time a queued job is predicted to hold
//     is offered at pricing.Price(job), the rest at pricing.Base.
//
// Predictions cover running jobs and queued jobs predicted to start before
// the horizon.
func Build(snap forecast.Snapshot, now, horizon int64, policy Policy, pricing forecast.Pricing) (forecast.Forecast, []forecast.Prediction, error) {
	return build(snap, now, horizon, policy, pricing, nil)
}

// build is Build with tune, when set, applied to the engine before the
// snapshot is loaded (tests and baseline benchmarks).
func build(snap forecast.Snapshot, now, horizon int64, policy Policy, pricing forecast.Pricing, tune func(*Engine)) (forecast.Forecast, []forecast.Prediction, error) {
	if now < 0 || horizon > forecast.MaxInstant || horizon < now {
		return forecast.Forecast{}, nil, fmt.Errorf("forecast: %w", errInvalid("[now %d, horizon %d]: must be an interval within [0, %d]", now, horizon, forecast.MaxInstant))
	}
	if err := pricing.Validate(); err != nil {
		return forecast.Forecast{}, nil, fmt.Errorf("forecast: %w", err)
	}
	e := NewEngine(Cluster{Site: snap.Site, Nodes: snap.Nodes}, policy, now)
	e.keepPlan = policy.Limits == nil // a kept plan cannot follow usage limits
	e.noEnded = true                  // predictions come from Started events
	if tune != nil {
		tune(e)
	}
	b := &builder{e: e, now: now, horizon: horizon, pricing: pricing, jobs: make(map[string]forecast.LocalJob, len(snap.Jobs)),
		preds: make([]forecast.Prediction, 0, len(snap.Jobs)), holds: make([]forecast.Hold, 0, 2*len(snap.Jobs)+len(snap.Reservations))}
	if err := b.load(snap); err != nil {
		return forecast.Forecast{}, nil, fmt.Errorf("forecast of %s: %w", snap.Site, err)
	}
	b.standingHolds()
	for _, ev := range e.AdvanceTo(horizon) {
		if ev.Kind == Started && ev.Start < horizon {
			b.predict(ev)
		}
	}
	f := forecast.Forecast{
		Version: forecast.Version, Site: snap.Site, Generated: now, Horizon: horizon,
		Nodes:      forecast.OfferedNodes(snap.Nodes),
		Slots:      forecast.BuildSlots(snap.Nodes, b.holds, now, horizon, pricing.Base),
		Unmodelled: unknownStates(b.unknown),
		FreePrice:  pricing.Base,
	}
	return f, b.preds, nil
}

type builder struct {
	e       *Engine
	now     int64
	horizon int64
	pricing forecast.Pricing
	jobs    map[string]forecast.LocalJob
	holds   []forecast.Hold
	preds   []forecast.Prediction
	unknown []forecast.LocalJob // jobs in a state Torque does not have
}

func (b *builder) load(snap forecast.Snapshot) error {
	resvs := map[string]bool{}
	for _, r := range snap.Reservations {
		if b.madeByPolicy(r) {
			continue
		}
		if err := b.reserve(r); err != nil {
			return err
		}
		resvs[r.ID] = true
	}
	for _, j := range snap.Jobs {
		if j.Reservation != "" && resvs[j.Reservation] {
			continue
		}
		if !j.KnownState() {
			b.unknown = append(b.unknown, j)
		}
		switch {
		case j.Running() || !j.KnownState():
			if err := b.running(j); err != nil {
				return err
			}
		case j.Waiting():
			b.jobs[j.ID] = j
			b.e.Submit(b.simJob(j))
		}
	}
	return nil
}

func (b *builder) reserve(r forecast.Reservation) error {
	if r.End <= b.now {
		return nil
	}
	var hosts []hostUse
	for _, h := range r.Hosts {
		i, ok := b.e.byName[h.Node]
		if !ok {
			return fmt.Errorf("reservation %s: %w", r.ID, errInvalid("unknown node %q", h.Node))
		}
		if b.e.nodes[i].usable && h.Procs > 0 {
			hosts = append(hosts, hostUse{node: i, procs: h.Procs})
			b.holds = append(b.holds, forecast.Hold{Node: h.Node, Procs: h.Procs, Start: r.Start, End: r.End})
		}
	}
	if len(hosts) > 0 {
		b.e.add(r, hosts)
	}
	return nil
}

func (b *builder) running(j forecast.LocalJob) error {
	started := min(j.Started, b.now)
	if j.Started == 0 {
		started = b.now
	}
	wall := min(j.Walltime, forecast.MaxDuration)
	if wall <= 0 {
		wall = max(b.horizon, b.now+1) - started
	}
	end := max(started+wall, b.now)
	hosts := j.Hosts
	if len(hosts) == 0 {
		hosts = b.e.firstFree(j.Procs)
	}
	sj := b.simJob(j)
	sj.Walltime = max(end-started, 1)
	if err := b.e.AddRunning(sj, started, hosts); err != nil {
		return err
	}
	for _, h := range hosts {
		b.holds = append(b.holds, forecast.Hold{Node: h.Node, Procs: h.Procs, Start: started, End: end})
	}
	b.preds = append(b.preds, forecast.Prediction{Job: j.ID, Start: started, End: end, Hosts: hosts})
	return nil
}

func (b *builder) simJob(j forecast.LocalJob) Job {
	wall := min(j.Walltime, forecast.MaxDuration)
	if wall <= 0 {
		wall = max(b.horizon-b.now, 1)
	}
	return Job{ID: j.ID, Procs: j.Procs, PPN: j.PPN, Walltime: wall, Runtime: -1, Submit: j.Submitted,
		Priority: j.Priority, Queue: j.Queue, User: j.User, Group: j.Group, Account: j.Account, QOS: j.QOS,
		Features: slices.Clone(j.Features)}
}

func (b *builder) predict(ev Event) {
	lj := b.jobs[ev.Job]
	price, priced := b.pricing.Price(lj)
	for _, h := range ev.Hosts {
		b.holds = append(b.holds, forecast.Hold{Node: h.Node, Procs: h.Procs, Start: ev.Start, End: ev.End, Priced: priced, Price: price})
	}
	b.preds = append(b.preds, forecast.Prediction{Job: ev.Job, Start: ev.Start, End: ev.End, Hosts: ev.Hosts})
}

// firstFree names free processors now, nodes in order, for a running job
// whose hosts the snapshot does not give.
func (e *Engine) firstFree(procs int) []forecast.HostProcs {
	var out []forecast.HostProcs
	for _, i := range e.order {
		n := &e.nodes[i]
		if !n.usable || procs == 0 {
			continue
		}
		if take := min(n.procs-n.used, procs); take > 0 {
			out = append(out, forecast.HostProcs{Node: n.name, Procs: take})
			procs -= take
		}
	}
	return out
}

// unknownStates is the Unmodelled line naming the jobs in states Torque
// does not have (at most five by name), nil when there are none.
func unknownStates(jobs []forecast.LocalJob) []string {
	if len(jobs) == 0 {
		return nil
	}
	var names []string
	for _, j := range jobs[:min(5, len(jobs))] {
		names = append(names, fmt.Sprintf("%s (state %q)", forecast.Clip(j.ID, forecast.MaxNameBytes), forecast.Clip(j.State, 8)))
	}
	more := ""
	if len(jobs) > 5 {
		more = fmt.Sprintf(" and %d more", len(jobs)-5)
	}
	return []string{fmt.Sprintf("%d jobs in a state Torque does not have, taken as running (holding their processors): %s%s",
		len(jobs), strings.Join(names, ", "), more)}
}

package sim

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"lookahead/forecast"
)

// ErrNoCapacity is wrapped by Reserve when the named nodes do not have the
// processors free over the reservation's interval.
var ErrNoCapacity = errors.New("not enough free processors")

// Reserve holds r.Hosts' processors over [r.Start, r.End) for a grid job:
// local jobs never use them. It refuses (ErrNoCapacity) a reservation that
// would overlap running jobs (held until their walltime) or other
// reservations beyond a node's processors, an unknown or unusable node, a
// duplicate id or an empty interval. Queued local jobs plan around it from
// the next scheduling pass on.
func (e *Engine) Reserve(r forecast.Reservation) error {
	hosts, err := e.resolve(r)
	if err != nil {
		return err
	}
	for _, h := range hosts {
		n := &e.nodes[h.node]
		free := n.procs - e.runningOn(h.node, r.Start) - e.peakHeldOn(h.node, r.Start, r.End)
		if h.procs > free {
			return fmt.Errorf("reservation %s on %s: %w (%d asked, %d free over [%d, %d))",
				r.ID, n.name, ErrNoCapacity, h.procs, max(free, 0), r.Start, r.End)
		}
	}
	e.add(r, hosts)
	return nil
}

func (e *Engine) resolve(r forecast.Reservation) ([]hostUse, error) {
	switch {
	case r.ID == "":
		return nil, fmt.Errorf("reservation: %w", errInvalid("empty id"))
	case r.End <= r.Start || r.End <= e.now:
		return nil, fmt.Errorf("reservation %s: %w", r.ID, errInvalid("interval [%d, %d) is empty or past", r.Start, r.End))
	case len(r.Hosts) == 0:
		return nil, fmt.Errorf("reservation %s: %w", r.ID, errInvalid("no hosts"))
	}
	for _, o := range e.resvs {
		if o.r.ID == r.ID {
			return nil, fmt.Errorf("reservation %s: %w", r.ID, errInvalid("duplicate id"))
		}
	}
	hosts := make([]hostUse, 0, len(r.Hosts))
	for _, h := range r.Hosts {
		i, ok := e.byName[h.Node]
		switch {
		case !ok:
			return nil, fmt.Errorf("reservation %s: %w", r.ID, errInvalid("unknown node %q", h.Node))
		case !e.nodes[i].usable:
			return nil, fmt.Errorf("reservation %s: %w", r.ID, errInvalid("node %q is not usable", h.Node))
		case h.Procs <= 0:
			return nil, fmt.Errorf("reservation %s: %w", r.ID, errInvalid("%d processors on %q", h.Procs, h.Node))
		}
		hosts = append(hosts, hostUse{node: i, procs: h.Procs})
	}
	return hosts, nil
}

func errInvalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", forecast.ErrInvalid, fmt.Sprintf(format, args...))
}

// runningOn is what running jobs hold on node i at some time from t on.
func (e *Engine) runningOn(i int, t int64) int {
	held := 0
	for _, j := range e.running {
		if j.wallEnd <= t && j.end <= t {
			continue
		}
		for _, h := range j.hosts {
			if h.node == i {
				held += h.procs
			}
		}
	}
	return held
}

// peakHeldOn is the most processors of node i that grid reservations and
// blocked jobs' reservations hold at any one instant of [s, t): holds that
// follow one another in time do not add up. Running jobs only release
// processors as time passes, so together with runningOn at s this bounds
// what a new reservation over [s, t) may take.
func (e *Engine) peakHeldOn(i int, s, t int64) int {
	type edge struct {
		at    int64
		procs int
	}
	var edges []edge
	hold := func(hs, he int64, procs int) {
		if hs < t && he > s && procs > 0 {
			edges = append(edges, edge{max(hs, s), procs}, edge{min(he, t), -procs})
		}
	}
	for _, h := range e.nodes[i].holds {
		hold(h.s, h.e, h.procs)
	}
	for _, b := range e.blocked {
		hold(b.s, b.e, b.per[i])
	}
	sort.Slice(edges, func(a, b int) bool {
		if edges[a].at != edges[b].at {
			return edges[a].at < edges[b].at
		}
		return edges[a].procs < edges[b].procs // ends before starts at one instant
	})
	held, peak := 0, 0
	for _, ed := range edges {
		held += ed.procs
		peak = max(peak, held)
	}
	return peak
}

// add records a reservation without checking capacity.
func (e *Engine) add(r forecast.Reservation, hosts []hostUse) {
	r.Hosts = append([]forecast.HostProcs(nil), r.Hosts...)
	e.rseq++
	rv := &resv{r: r, hosts: hosts, seq: e.rseq}
	for _, h := range hosts {
		if e.nodes[h.node].usable {
			rv.pool += h.procs
		}
		n := &e.nodes[h.node]
		n.holds = append(n.holds, nhold{s: r.Start, e: r.End, procs: h.procs, r: rv})
	}
	i := sort.Search(len(e.resvs), func(k int) bool { return e.resvs[k].r.Start > r.Start })
	e.resvs = append(e.resvs, nil)
	copy(e.resvs[i+1:], e.resvs[i:])
	e.resvs[i] = rv
	e.resvChanged = true
	e.dirty = true
	e.planValid = false
}

// Release drops the reservation id; it reports whether it existed.
// Idempotent.
func (e *Engine) Release(id string) bool {
	for i, r := range e.resvs {
		if r.r.ID == id {
			e.drop(i)
			e.dirty = true
			e.planValid = false
			return true
		}
	}
	return false
}

func (e *Engine) drop(i int) {
	rv := e.resvs[i]
	e.resvChanged = true
	e.resvs = append(e.resvs[:i], e.resvs[i+1:]...)
	for _, h := range rv.hosts {
		n := &e.nodes[h.node]
		n.holds = slices.DeleteFunc(n.holds, func(x nhold) bool { return x.r == rv })
	}
}

// AddRunning seeds a job that already runs: it started at started on hosts
// and holds them until started+walltime (or its runtime, when shorter and
// known). Used to load a snapshot; it does not check capacity (the real
// cluster is the truth).
func (e *Engine) AddRunning(j Job, started int64, hosts []forecast.HostProcs) error {
	if j.Walltime <= 0 {
		return fmt.Errorf("running job %s: %w", j.ID, errInvalid("walltime %d s is not positive", j.Walltime))
	}
	hs := make([]hostUse, 0, len(hosts))
	for _, h := range hosts {
		i, ok := e.byName[h.Node]
		if !ok {
			return fmt.Errorf("running job %s: %w", j.ID, errInvalid("unknown node %q", h.Node))
		}
		hs = append(hs, hostUse{node: i, procs: h.Procs})
	}
	e.seq++
	jb := newJob(j, e.seq)
	end := sat(started, j.Walltime)
	if j.Runtime >= 0 && j.Runtime < j.Walltime {
		end = started + j.Runtime
	}
	e.run(jb, started, max(end, e.now), hs)
	e.dirty = true
	e.planValid = false
	return nil
}

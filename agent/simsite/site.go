package simsite

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/wire"
)

// Config describes a simulated site. Nodes × PPN processors named
// <site>-n0001…, all of speed Speed (default 1), MemMB and Features.
// Workload jobs have Submit relative to Start (SWF-style: seconds from the
// trace's origin) and are shifted by Start. Clock is the site's time
// (default time.Now); the engine is advanced to it at every Snapshot.
type Config struct {
	Site     string
	Nodes    int
	PPN      int
	Speed    float64
	MemMB    int64
	Features []string
	Policy   sim.Policy
	Workload []sim.Job
	Start    int64
	Clock    func() time.Time
	// StartDelay is how long after its reservation's start a dispatched
	// part starts (a scheduler's poll; default 0).
	StartDelay time.Duration
	// KeepCompleted is how long completed parts stay listed, as Torque's
	// keep_completed (default 300 s).
	KeepCompleted time.Duration
}

// Site is a running simulated cluster.
type Site struct {
	cfg Config
	mu  sync.Mutex
	eng *sim.Engine
	rej int
	acl map[string]wire.Identity // reservation id → ACL
	// resv are the reservations' windows, by id; parts are the grid jobs'
	// parts submitted here (see parts.go), seq numbers them.
	resv  map[string]forecast.Reservation
	parts []*part
	seq   int
}

// New builds the site's engine at cfg.Start with its workload queued for
// the future. Jobs the cluster can never run are rejected and counted
// (Rejected), not dropped silently.
func New(cfg Config) (*Site, error) {
	if !forecast.IsPlainName(cfg.Site) {
		return nil, fmt.Errorf("simsite: site %q: must be a plain name", cfg.Site)
	}
	if cfg.Nodes <= 0 || cfg.PPN <= 0 {
		return nil, fmt.Errorf("simsite %s: nodes %d, ppn %d: both must be > 0", cfg.Site, cfg.Nodes, cfg.PPN)
	}
	if cfg.Speed == 0 {
		cfg.Speed = 1
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.KeepCompleted == 0 {
		cfg.KeepCompleted = 300 * time.Second
	}
	c := sim.Cluster{Site: cfg.Site}
	for i := range cfg.Nodes {
		c.Nodes = append(c.Nodes, forecast.SnapshotNode{Name: fmt.Sprintf("%s-n%04d", cfg.Site, i+1),
			Procs: cfg.PPN, State: []string{forecast.NodeFree}, Speed: cfg.Speed, MemMB: cfg.MemMB, Features: cfg.Features})
	}
	s := &Site{cfg: cfg, eng: sim.NewEngine(c, cfg.Policy, cfg.Start), acl: map[string]wire.Identity{},
		resv: map[string]forecast.Reservation{}}
	for _, j := range cfg.Workload {
		j.Submit += cfg.Start
		s.eng.Submit(j)
	}
	return s, nil
}

// advance moves the engine to the clock; s.mu must be held.
func (s *Site) advance() {
	t := s.cfg.Clock().Unix()
	for _, ev := range s.eng.AdvanceTo(max(t, s.eng.Now())) {
		if ev.Kind == sim.Rejected {
			s.rej++
		}
	}
	s.stepParts()
}

// Snapshot advances the site to its clock and returns its state.
func (s *Site) Snapshot(context.Context) (forecast.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	snap := s.eng.Snapshot()
	snap.Site = s.cfg.Site
	snap.Jobs = append(snap.Jobs, s.partJobs()...)
	return snap, nil
}

// Rejected is how many workload jobs the site could never run.
func (s *Site) Rejected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rej
}

// ReservationID is the name a grid job's reservation gets on a simulated
// site (one reservation per job, as Maui's setres names it: base name .0).
func ReservationID(job string) string { return job + ".0" }

// Reserve holds spec's processors in the engine. A refusal by the engine
// (not enough free processors) wraps agent.ErrScheduler.
func (s *Site) Reserve(_ context.Context, spec agent.ReserveSpec) (agent.Reserved, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	r := forecast.Reservation{ID: ReservationID(spec.Job), Job: spec.Job, Start: spec.Start, End: spec.End}
	for _, n := range spec.Nodes {
		r.Hosts = append(r.Hosts, forecast.HostProcs{Node: n.Node, Procs: n.Procs})
	}
	cmd := []string{"sim-reserve", r.ID}
	if err := s.eng.Reserve(r); err != nil {
		if errors.Is(err, sim.ErrNoCapacity) {
			err = fmt.Errorf("%w: %w", agent.ErrScheduler, err)
		}
		return agent.Reserved{Commands: [][]string{cmd}}, err
	}
	s.acl[r.ID] = spec.Identity
	s.resv[r.ID] = r
	return agent.Reserved{Reservations: []wire.Reservation{s.toWire(r)}, Commands: [][]string{cmd}}, nil
}

// Release drops job's reservation; idempotent.
func (s *Site) Release(_ context.Context, job string) (agent.Released, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := ReservationID(job)
	out := agent.Released{Commands: [][]string{{"sim-release", id}}}
	if s.eng.Release(id) {
		out.IDs = []string{id}
	}
	delete(s.acl, id)
	delete(s.resv, id)
	return out, nil
}

// List returns the reservations the engine holds that have not ended.
func (s *Site) List(context.Context) ([]wire.Reservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	var out []wire.Reservation
	for _, r := range s.eng.Snapshot().Reservations {
		out = append(out, s.toWire(r))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (s *Site) toWire(r forecast.Reservation) wire.Reservation {
	id := s.acl[r.ID]
	w := wire.Reservation{ID: r.ID, Job: r.Job, Site: s.cfg.Site, Start: r.Start, End: r.End, Identity: id,
		Submit: "-W x=FLAGS:ADVRES:" + r.ID}
	if id.Account != "" {
		w.Submit = "-A " + id.Account + " " + w.Submit
	}
	for _, h := range r.Hosts {
		w.Nodes = append(w.Nodes, wire.NodeProcs{Node: h.Node, Procs: h.Procs})
	}
	return w
}

var (
	_ agent.Snapshotter = (*Site)(nil)
	_ agent.Reserver    = (*Site)(nil)
)

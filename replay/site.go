package replay

import (
	"fmt"

	"lookahead/forecast"
	"lookahead/forecast/sim"
)

// site is one cluster of a run: its simulator, its latest forecast, and the
// broker's ledger of what it reserved there.
type site struct {
	idx     int
	spec    SiteSpec
	eng     *sim.Engine
	policy  sim.Policy
	pricing forecast.Pricing
	fc      forecast.Forecast
	built   int64 // when fc was built; -1: never
	dirty   bool  // a reservation changed the site since fc was built
	changed int64 // last time something happened on the site
	seq     uint64
	ledger  map[string]forecast.Reservation
	submit  map[string]int64 // local jobs' submit times
}

func newSite(i int, spec SiteSpec, start int64) (*site, error) {
	pol, err := sim.ParsePolicy(spec.Policy)
	if err != nil {
		return nil, fmt.Errorf("site %s: %w", spec.Name, err)
	}
	c := sim.UniformCluster(spec.Nodes, spec.PPN)
	c.Site = spec.Name
	for k := range c.Nodes {
		c.Nodes[k].Speed = spec.Speed
	}
	return &site{
		idx: i, spec: spec, eng: sim.NewEngine(c, pol, start), policy: pol,
		pricing: spec.PricingOrDefault(), built: -1,
		ledger: map[string]forecast.Reservation{}, submit: map[string]int64{},
	}, nil
}

// submitLocal hands the site's local stream to its simulator.
func (s *site) submitLocal(jobs []TraceJob) {
	for _, j := range jobs {
		s.submit[j.ID] = j.Submit
		s.eng.Submit(sim.Job{ID: j.ID, Procs: j.Procs, Walltime: j.Walltime, Runtime: j.Run, Submit: j.Submit, User: j.User})
	}
}

// forecast rebuilds the site's forecast from its snapshot at now, as the
// agent would, and checks that the simulator holds exactly the
// reservations the broker made there.
func (s *site) forecast(now, horizon int64, chk *Checks) error {
	snap := s.eng.Snapshot()
	chk.ledger(s, snap)
	f, _, err := sim.Build(snap, now, now+horizon, s.policy, s.pricing)
	if err != nil {
		return fmt.Errorf("forecast of %s at %d: %w", s.spec.Name, now, err)
	}
	s.seq++
	f.Seq = s.seq
	s.fc, s.built, s.dirty = f, now, false
	return nil
}

// idle reports whether nothing runs, waits or is reserved on the site.
func (s *site) idle() bool {
	snap := s.eng.Snapshot()
	return len(snap.Jobs) == 0 && len(snap.Reservations) == 0
}

package replay

import (
	"container/heap"
	"errors"
	"math"
	"sort"

	"lookahead/forecast"
	"lookahead/forecast/sim"
)

// commit reserves the allocation on every site it uses, all or nothing, and
// starts the grid job in its reservation. A site refusing (its forecast was
// stale) releases the others, marks the site for a fresh forecast and
// leaves the job in the queue; it reports whether the job was committed.
func (r *replayer) commit(job GridJob, a forecast.Allocation) bool {
	sites, hosts := r.partsBySite(a)
	ids := make([]string, 0, len(sites))
	for k, i := range sites {
		s := r.sites[i]
		res := forecast.Reservation{ID: a.Job + "@" + s.spec.Name, Job: a.Job, Start: a.Start, End: a.End, Hosts: hosts[k]}
		if err := s.eng.Reserve(res); err != nil {
			for m, done := range sites[:k] {
				r.sites[done].eng.Release(ids[m])
				delete(r.sites[done].ledger, ids[m])
			}
			s.dirty = true
			if errors.Is(err, sim.ErrNoCapacity) {
				r.stats.Stale++
			} else {
				r.checks.fail("reserve %s: %v", res.ID, err)
			}
			return false
		}
		s.ledger[res.ID] = res
		s.dirty = true
		ids = append(ids, res.ID)
	}
	r.start(job, a, sites, hosts, ids)
	return true
}

// partsBySite groups an allocation's processors per site (scenario order)
// and node (name order).
func (r *replayer) partsBySite(a forecast.Allocation) ([]int, [][]forecast.HostProcs) {
	idx := map[string]int{}
	for i, s := range r.sites {
		idx[s.spec.Name] = i
	}
	per := map[int]map[string]int{}
	for _, p := range a.Parts {
		i := idx[p.Site]
		if per[i] == nil {
			per[i] = map[string]int{}
		}
		per[i][p.Node] += p.Procs
	}
	sites := make([]int, 0, len(per))
	for i := range per {
		sites = append(sites, i)
	}
	sort.Ints(sites)
	hosts := make([][]forecast.HostProcs, len(sites))
	for k, i := range sites {
		for n, p := range per[i] {
			hosts[k] = append(hosts[k], forecast.HostProcs{Node: n, Procs: p})
		}
		sort.Slice(hosts[k], func(x, y int) bool { return hosts[k][x].Node < hosts[k][y].Node })
	}
	return sites, hosts
}

// start records the grid job and schedules its end: min(run, walltime) on
// the reference CPU over the slowest speed, times the multi-site factor
// when it spans sites, after the staging delay per remote site. A run that
// outlasts the reservation is cut at its end (Torque kills it).
func (r *replayer) start(job GridJob, a forecast.Allocation, sites []int, hosts [][]forecast.HostProcs, ids []string) {
	end := a.Start + r.duration(job, sites)
	if end > a.End {
		end = a.End
		r.stats.Clipped++
	}
	// The user pays for the share of the reservation the job held, and each
	// owner earns that share of its parts (forecast.Charged).
	rec := JobRecord{ID: job.Req.ID, Grid: true, Submit: job.Req.Submitted, Start: a.Start, End: end, Reserved: a.End,
		Credits: forecast.Charged(a.Cost, a.Start, a.End, end), Committed: a.Cost}
	earned := map[string]float64{}
	for _, p := range a.Parts {
		earned[p.Site] += forecast.Charged(p.Cost, a.Start, a.End, end)
	}
	for k, i := range sites {
		rec.Parts = append(rec.Parts, SiteUse{Site: i, Procs: sumProcs(hosts[k]), Start: a.Start, Hosts: hosts[k],
			Credits: earned[r.sites[i].spec.Name]})
	}
	r.records = append(r.records, rec)
	heap.Push(&r.rel, release{at: end, job: job.Req.ID, ids: ids, site: sites})
	r.stats.Commits++
	r.stats.Events++
	if len(sites) > 1 {
		r.stats.MultiSite++
	}
}

// duration is how long a grid job holds its processors on these sites:
// the co-allocation core's runtime model (coalloc.Options.Duration) applied
// to min(run, walltime) instead of the walltime.
func (r *replayer) duration(job GridJob, sites []int) int64 {
	slowest := math.Inf(1)
	for _, i := range sites {
		slowest = min(slowest, r.sites[i].spec.Speed)
	}
	return coallocOptions(r.sc).Duration(min(job.Run, job.Req.Walltime), slowest, len(sites))
}

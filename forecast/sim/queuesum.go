package sim

import "slices"

// queueSum summarizes a superset of the waiting jobs: for each processor
// count asked, the shortest walltime asked with it. If no entry fits now
// on the profile, no waiting job does, and a pass's search for one
// (laterFits) can stop without walking the queue. Jobs are added as they
// enter the queue and not removed as they start (the summary stays a
// superset); a search the summary sent in vain rebuilds it from the queue.
type queueSum struct {
	ents []sumEnt // by procs
}

type sumEnt struct {
	procs int
	wall  int64
}

// add counts j in the summary.
func (s *queueSum) add(j *job) {
	i, found := slices.BinarySearchFunc(s.ents, j.Procs, func(x sumEnt, p int) int { return x.procs - p })
	if found {
		s.ents[i].wall = min(s.ents[i].wall, j.Walltime)
		return
	}
	s.ents = slices.Insert(s.ents, i, sumEnt{procs: j.Procs, wall: j.Walltime})
}

// rebuild makes the summary the jobs of q not started.
func (s *queueSum) rebuild(q []*job) {
	s.ents = s.ents[:0]
	for _, j := range q {
		if !j.started {
			s.add(j)
		}
	}
}

// anyFits reports whether some entry fits now on p for its walltime: false
// means no summarized job does.
func (s *queueSum) anyFits(p *profile) bool {
	free := p.steps[0].free
	for _, x := range s.ents {
		if x.procs > free {
			return false
		}
		if ok, _ := p.fitsFrom(0, x.procs, x.wall); ok {
			return true
		}
	}
	return false
}

package replay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"lookahead/forecast"
)

// planShared gives planRebuild's answers with far fewer pools: one pool
// per site set for the whole cycle, built from the cycle's forecasts the
// first time a job asks for that set (then given what the jobs before
// took, in their order). Each job is tried on its sets' pools (Pool.Try,
// nothing taken), and the chosen allocation is taken from every pool (a
// pool skips parts on sites it does not hold), so every pool holds on each
// of its sites exactly what a pool rebuilt from the remaining forecasts
// would. TestPerJobSharedSameReplay checks the two give the same replay.
func (p perJob) planShared(now int64, fcs []forecast.Forecast, queue []GridJob, env Env) ([]forecast.Allocation, error) {
	sp := setPools{now: now, fcs: fcs, env: env, pools: map[string]Pool{}}
	out := make([]forecast.Allocation, 0, len(queue))
	for _, job := range fcfs(queue, p.byWidth) {
		sets := p.sets(job, env)
		cands := make([]candidate, 0, len(sets))
		for _, set := range sets {
			pool, err := sp.get(set)
			if err != nil {
				return nil, fmt.Errorf("%s: job %s: %w", p.name, job.Req.ID, err)
			}
			cands = append(cands, candidate{sites: set, alloc: pool.Try(setRequest(job, set))})
		}
		pick := p.choose(job, cands, env)
		if pick < 0 {
			out = append(out, forecast.Allocation{Job: job.Req.ID, Error: noRoom(cands)})
			continue
		}
		c := cands[pick]
		if err := sp.take(setRequest(job, c.sites), c.alloc); err != nil {
			return nil, fmt.Errorf("%s: job %s: %w", p.name, job.Req.ID, err)
		}
		out = append(out, c.alloc)
	}
	return out, nil
}

// setPools are a cycle's pools by site set, and what was taken so far.
type setPools struct {
	now   int64
	fcs   []forecast.Forecast
	env   Env
	pools map[string]Pool
	taken []takenAlloc
}

type takenAlloc struct {
	req   forecast.JobRequest
	alloc forecast.Allocation
}

func (s *setPools) get(set []int) (Pool, error) {
	key := setKey(set)
	if p, ok := s.pools[key]; ok {
		return p, nil
	}
	p, err := s.env.NewPool(subset(s.fcs, set), s.now)
	if err != nil {
		return nil, err
	}
	for _, t := range s.taken {
		if err := p.Take(t.req, t.alloc); err != nil {
			return nil, err
		}
	}
	s.pools[key] = p
	return p, nil
}

// take removes a chosen allocation from every pool, in a fixed order.
func (s *setPools) take(req forecast.JobRequest, a forecast.Allocation) error {
	keys := make([]string, 0, len(s.pools))
	for k := range s.pools {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := s.pools[k].Take(req, a); err != nil {
			return err
		}
	}
	s.taken = append(s.taken, takenAlloc{req: req, alloc: a})
	return nil
}

func setKey(set []int) string {
	var b strings.Builder
	for _, i := range set {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(',')
	}
	return b.String()
}

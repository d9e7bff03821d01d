package replay

import (
	"reflect"

	"lookahead/forecast"
)

// memoPlaced is one answer of a lookahead strategy's last cycle and what
// it depended on in time (coalloc.Pool.PlaceBounds).
type memoPlaced struct {
	req          forecast.JobRequest
	alloc        forecast.Allocation
	lower, reach int64
}

// planKept places the jobs in order on one pool over every site, as Plan
// without a memo does, but keeps a job's answer of the last cycle when
// every site's slots from now to the nearer horizon are the same, every
// job before it got the same answer (so took the same), its request is the
// same, no feasible allocation of it started before now (lower) and its
// searches read nothing beyond the nearer horizon (reach): the rule of the
// incremental planner (coalloc.Incremental), which Pool.PlaceBounds
// reports. A kept answer is taken from the pool; the pool is built only
// when some job must be placed again. TestLookaheadKeptSameReplay checks
// the replay is the same as without keeping.
func (l lookahead) planKept(now int64, fcs []forecast.Forecast, reqs []forecast.JobRequest, env Env) ([]forecast.Allocation, error) {
	memo := env.memo
	same := memo.sameForecasts(fcs, now)
	lim := memo.horizon(fcs)
	var pool Pool
	var pending []memoPlaced // kept answers not yet taken from the pool
	next := make([]memoPlaced, 0, len(reqs))
	out := make([]forecast.Allocation, 0, len(reqs))
	for k, r := range reqs {
		var mp memoPlaced
		if same && k < len(memo.placed) && memo.placed[k].keeps(r, now, lim) {
			mp = memo.placed[k]
			if mp.alloc.Placed() {
				pending = append(pending, mp)
			}
		} else {
			var err error
			if pool, err = l.ready(pool, now, fcs, pending, env); err != nil {
				return nil, err
			}
			pending = nil
			mp.req = r
			mp.alloc, mp.lower, mp.reach = pool.PlaceBounds(r)
			same = same && k < len(memo.placed) && reflect.DeepEqual(memo.placed[k].req, r) &&
				reflect.DeepEqual(mp.alloc, memo.placed[k].alloc)
		}
		next = append(next, mp)
		out = append(out, mp.alloc)
	}
	memo.now, memo.fcs, memo.placed = now, fcs, next
	return out, nil
}

// ready is the cycle's pool with the pending kept answers taken.
func (l lookahead) ready(pool Pool, now int64, fcs []forecast.Forecast, pending []memoPlaced, env Env) (Pool, error) {
	if pool == nil {
		var err error
		if pool, err = env.NewPool(fcs, now); err != nil {
			return nil, err
		}
	}
	for _, mp := range pending {
		if err := pool.Take(mp.req, mp.alloc); err != nil {
			return nil, err
		}
	}
	return pool, nil
}

// keeps: the same request, and time and the horizon did not reach what the
// answer depended on.
func (m memoPlaced) keeps(r forecast.JobRequest, now, lim int64) bool {
	return reflect.DeepEqual(m.req, r) && m.lower >= now && m.reach <= lim
}

package replay

import (
	"math"
	"reflect"

	"lookahead/broker/coalloc"
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
// without a memo does, but keeps a job's answer of the last cycle when its
// request is the same, no feasible allocation of it started before now
// (lower) and its searches read nothing at or after the first instant
// where what the pool holds may differ from last cycle's (reach <=
// changed): the incremental planner's rule (coalloc.Incremental), with
// the bounds Pool.PlaceBounds reports. What the pool holds before a job
// may differ from last cycle from the earliest of: where a site's slots
// differ (diffFrom), the start of any answer of last cycle whose job left
// the queue, and the starts of the old and new answers of every job
// before it that was placed again and changed. A kept answer is taken
// from the pool; the pool is built only when some job must be placed
// again. TestLookaheadKeptSameReplay and TestKeptAnswersFollowTime check
// the answers are those of placing every job again.
func (l lookahead) planKept(now int64, fcs []forecast.Forecast, reqs []forecast.JobRequest, env Env) ([]forecast.Allocation, error) {
	memo := env.memo
	lim := memo.horizon(fcs)
	changed := memo.diffFrom(fcs, now, lim)
	if _, moved, _ := cycleBacklog(now, fcs, reqs, env); moved {
		changed = now // every answer weighed the old backlog
	}
	old := map[string]memoPlaced{}
	for _, mp := range memo.placed {
		old[mp.req.ID] = mp
	}
	for _, r := range reqs {
		delete(old, r.ID)
	}
	for _, mp := range old { // left the queue: its take is gone
		if mp.alloc.Placed() {
			changed = min(changed, mp.alloc.Start)
		}
	}
	prev := map[string]memoPlaced{}
	for _, mp := range memo.placed {
		prev[mp.req.ID] = mp
	}
	var pool Pool
	var pending []memoPlaced // kept answers not yet taken from the pool
	next := make([]memoPlaced, 0, len(reqs))
	out := make([]forecast.Allocation, 0, len(reqs))
	for _, r := range reqs {
		mp, had := prev[r.ID]
		if had && mp.keeps(r, now, min(lim, changed)) {
			if mp.alloc.Placed() {
				pending = append(pending, mp)
			}
		} else {
			var err error
			if pool, err = l.ready(pool, now, fcs, pending, env); err != nil {
				return nil, err
			}
			pending = nil
			fresh := memoPlaced{req: r}
			fresh.alloc, fresh.lower, fresh.reach = pool.PlaceBounds(r)
			if !had || !reflect.DeepEqual(mp.req, r) || !reflect.DeepEqual(mp.alloc, fresh.alloc) {
				changed = min(changed, startOr(mp.alloc), startOr(fresh.alloc))
			}
			mp = fresh
		}
		next = append(next, mp)
		out = append(out, mp.alloc)
	}
	memo.now, memo.fcs, memo.placed = now, fcs, next
	return out, nil
}

// startOr is a placed allocation's start, else the end of time.
func startOr(a forecast.Allocation) int64 {
	if a.Placed() {
		return a.Start
	}
	return math.MaxInt64
}

// ready is the cycle's pool with the pending kept answers taken.
func (l lookahead) ready(pool Pool, now int64, fcs []forecast.Forecast, pending []memoPlaced, env Env) (Pool, error) {
	if pool == nil {
		var err error
		if pool, err = env.NewPool(fcs, now); err != nil {
			return nil, err
		}
		pool = withBacklog(pool, env)
	}
	for _, mp := range pending {
		if err := pool.Take(mp.req, mp.alloc); err != nil {
			return nil, err
		}
	}
	return pool, nil
}

// keeps: the same request, and neither time nor a change reached what the
// answer depended on.
func (m memoPlaced) keeps(r forecast.JobRequest, now, changed int64) bool {
	return reflect.DeepEqual(m.req, r) && m.lower >= now && m.reach <= changed
}

// diffFrom is an instant no later than the first at which any site's
// slots, cut to [now, lim), differ from last cycle's (lim when none does;
// now when there is no last cycle or the sites or nodes differ): the
// earliest start of a slot found in one and not the other (counted as a
// multiset), since where the processors first differ some slot covering
// that instant is in one and not the other.
func (m *planMemo) diffFrom(fcs []forecast.Forecast, now, lim int64) int64 {
	if m.fcs == nil || now < m.now || len(m.fcs) != len(fcs) {
		return now
	}
	from := lim
	for i := range fcs {
		a, b := &m.fcs[i], &fcs[i]
		if a.Site != b.Site || !reflect.DeepEqual(a.Nodes, b.Nodes) {
			return now
		}
		count := map[forecast.Slot]int{}
		for _, s := range cut(a.Slots, now, lim) {
			count[s]++
		}
		for _, s := range cut(b.Slots, now, lim) {
			count[s]--
		}
		for s, n := range count {
			if n != 0 {
				from = min(from, s.Start)
			}
		}
	}
	return max(from, now)
}

// planIncremental plans the jobs, already in the queue order of
// env.incremental, with the co-allocation core's incremental planner kept
// in the memo for the run: the answers of placing every job again in that
// order, re-planning only the jobs whose answer may differ (see
// coalloc.Incremental). The answers come back in the order planned.
func (l lookahead) planIncremental(now int64, fcs []forecast.Forecast, reqs []forecast.JobRequest, env Env) ([]forecast.Allocation, error) {
	memo := env.memo
	if memo.inc == nil {
		inc, err := coalloc.NewIncremental(*env.incremental)
		if err != nil {
			return nil, err
		}
		memo.inc = inc
	}
	out, _, err := memo.inc.Plan(fcs, reqs, now)
	return out, err
}

// splitBacklog is the backlog the last cycle's pools weighed.
type splitBacklog struct {
	last int64
	had  bool
}

// cycleBacklog is the split window's backlog for this cycle's pools, kept
// over the cycles as the incremental planner keeps it
// (coalloc.KeptBacklog), so that every way of planning gives the same
// answers; moved says it differs from the last cycle's. on is false when
// the window is off.
func cycleBacklog(now int64, fcs []forecast.Forecast, reqs []forecast.JobRequest, env Env) (b int64, moved, on bool) {
	if env.incremental == nil || env.incremental.SplitBacklog <= 0 || env.split == nil {
		return 0, false, false
	}
	s := env.split
	b = coalloc.KeptBacklog(s.last, coalloc.Backlog(fcs, reqs, now), s.had)
	moved = s.had && b != s.last
	s.last, s.had = b, true
	return b, moved, true
}

// withBacklog sets this cycle's backlog (cycleBacklog's) on a pool that
// weighs one.
func withBacklog(pool Pool, env Env) Pool {
	if sb, ok := pool.(interface{ SetBacklog(int64) }); ok && env.split != nil && env.split.had &&
		env.incremental != nil && env.incremental.SplitBacklog > 0 {
		sb.SetBacklog(env.split.last)
	}
	return pool
}

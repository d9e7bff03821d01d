package replay

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"lookahead/forecast"
)

// planShared gives planRebuild's answers with far fewer pools and
// placements:
//
//   - one pool per site set for the whole cycle, built from the cycle's
//     forecasts the first time a job is tried on that set, and given what
//     the jobs before took (in their order) only when it is next tried, so
//     each pool holds on each of its sites exactly what a pool rebuilt from
//     the remaining forecasts would;
//   - each job is tried on its sets' pools (Pool.Try: nothing taken), the
//     chosen allocation is taken;
//   - with a memo (one run, exact tiers), a candidate of the last cycle is
//     kept instead of tried again when nothing it depended on changed (see
//     planMemo).
//
// TestPerJobSharedSameReplay checks it gives the same replay as planRebuild.
func (p perJob) planShared(now int64, fcs []forecast.Forecast, queue []GridJob, env Env) ([]forecast.Allocation, error) {
	sp := setPools{now: now, fcs: fcs, env: env, pools: map[string]*lazyPool{}}
	memo := env.memo
	same := memo != nil && memo.sameForecasts(fcs, now)
	var next []memoJob
	out := make([]forecast.Allocation, 0, len(queue))
	for k, job := range fcfs(queue, p.byWidth) {
		var prev *memoJob
		if same && k < len(memo.jobs) && reflect.DeepEqual(memo.jobs[k].req, job.Req) {
			prev = &memo.jobs[k]
		}
		cands, err := p.tryAll(job, env, &sp, prev, now)
		if err != nil {
			return nil, fmt.Errorf("%s: job %s: %w", p.name, job.Req.ID, err)
		}
		pick := p.choose(job, cands, env)
		mj := memoJob{req: job.Req, cands: cands, pick: pick}
		same = prev != nil && prev.sameChoice(mj)
		next = append(next, mj)
		if pick < 0 {
			out = append(out, forecast.Allocation{Job: job.Req.ID, Error: noRoom(cands)})
			continue
		}
		c := cands[pick]
		sp.take(setRequest(job, c.sites), c.alloc)
		out = append(out, c.alloc)
	}
	if memo != nil {
		memo.now, memo.fcs, memo.jobs = now, fcs, next
	}
	return out, nil
}

// tryAll tries the job on each of its site sets, keeping the last cycle's
// candidate where that is exact.
func (p perJob) tryAll(job GridJob, env Env, sp *setPools, prev *memoJob, now int64) ([]candidate, error) {
	sets := p.sets(job, env)
	cands := make([]candidate, 0, len(sets))
	for i, set := range sets {
		if prev != nil && i < len(prev.cands) && prev.keep(i, set, now) {
			cands = append(cands, prev.cands[i])
			continue
		}
		pool, err := sp.get(set)
		if err != nil {
			return nil, err
		}
		cands = append(cands, candidate{sites: set, alloc: pool.Try(setRequest(job, set))})
	}
	return cands, nil
}

// planMemo is what a strategy keeps of its last cycle in one run. For the
// per-job strategies: when every site's slots from now to the nearer of
// the two horizons are the same as last cycle's, and every job before a
// job chose the same allocation as last cycle (so took the same), the
// job's pools hold the same there, and a candidate that was placed and
// starts no earlier than now is still the answer: each candidate is a
// job's earliest finish on a set with exact tiers, and with the same slots
// time passing only removes allocations starting before now, which all
// ranked after the kept one (they start earlier, so they must have ended
// later); slots gained beyond the old horizon only allow allocations
// ending after it, which rank after the kept one too. Candidates that did
// not fit are tried again (the new horizon may let them fit).
type planMemo struct {
	now  int64
	fcs  []forecast.Forecast
	jobs []memoJob // per-job strategies
	// placed are the lookahead strategies' answers (lookahead.go).
	placed []memoPlaced
}

type memoJob struct {
	req   forecast.JobRequest
	cands []candidate
	pick  int
}

// keep: the last cycle's candidate i was for the same set, placed, and
// starts no earlier than now.
func (m *memoJob) keep(i int, set []int, now int64) bool {
	c := m.cands[i]
	return c.alloc.Placed() && c.alloc.Start >= now && setKey(c.sites) == setKey(set)
}

// sameChoice: the job took the same as last cycle (or nothing both times).
func (m *memoJob) sameChoice(n memoJob) bool {
	if (m.pick < 0) != (n.pick < 0) {
		return false
	}
	return m.pick < 0 || reflect.DeepEqual(m.cands[m.pick].alloc, n.cands[n.pick].alloc)
}

// sameForecasts: the same sites and nodes, and every site's slots cut to
// [now, the nearer horizon) the same, in the same order.
func (m *planMemo) sameForecasts(fcs []forecast.Forecast, now int64) bool {
	if m.fcs == nil || now < m.now || len(fcs) != len(m.fcs) {
		return false
	}
	for i := range fcs {
		a, b := &m.fcs[i], &fcs[i]
		if a.Site != b.Site || !reflect.DeepEqual(a.Nodes, b.Nodes) {
			return false
		}
		lim := min(a.Horizon, b.Horizon)
		if !slices.Equal(cut(a.Slots, now, lim), cut(b.Slots, now, lim)) {
			return false
		}
	}
	return true
}

// horizon is the nearer of each site's two horizons, the earliest of all
// (the slots compared by sameForecasts end there).
func (m *planMemo) horizon(fcs []forecast.Forecast) int64 {
	lim := int64(math.MaxInt64)
	for i := range fcs {
		if i < len(m.fcs) {
			lim = min(lim, m.fcs[i].Horizon)
		}
		lim = min(lim, fcs[i].Horizon)
	}
	return lim
}

// cut is the slots cut to [from, to), empty ones dropped.
func cut(ss []forecast.Slot, from, to int64) []forecast.Slot {
	out := make([]forecast.Slot, 0, len(ss))
	for _, s := range ss {
		s.Start, s.End = max(s.Start, from), min(s.End, to)
		if s.End > s.Start {
			out = append(out, s)
		}
	}
	return out
}

// setPools are a cycle's pools by site set, and what was taken so far.
type setPools struct {
	now   int64
	fcs   []forecast.Forecast
	env   Env
	pools map[string]*lazyPool
	taken []takenAlloc
}

// lazyPool is a pool and how many of the cycle's takes it was given.
type lazyPool struct {
	pool    Pool
	applied int
}

type takenAlloc struct {
	req   forecast.JobRequest
	alloc forecast.Allocation
}

// get is the set's pool with everything taken so far removed.
func (s *setPools) get(set []int) (Pool, error) {
	key := setKey(set)
	lp, ok := s.pools[key]
	if !ok {
		p, err := s.env.NewPool(subset(s.fcs, set), s.now)
		if err != nil {
			return nil, err
		}
		lp = &lazyPool{pool: p}
		s.pools[key] = lp
	}
	for ; lp.applied < len(s.taken); lp.applied++ {
		t := s.taken[lp.applied]
		if err := lp.pool.Take(t.req, t.alloc); err != nil {
			return nil, err
		}
	}
	return lp.pool, nil
}

// take records a chosen allocation; pools get it when next used.
func (s *setPools) take(req forecast.JobRequest, a forecast.Allocation) {
	s.taken = append(s.taken, takenAlloc{req: req, alloc: a})
}

func setKey(set []int) string {
	var b strings.Builder
	for _, i := range set {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(',')
	}
	return b.String()
}

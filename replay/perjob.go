package replay

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"lookahead/broker/coalloc"
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
	ks := newKeeping(memo, fcs, now)
	next := map[string]*memoJob{}
	out := make([]forecast.Allocation, 0, len(queue))
	for _, job := range fcfs(queue, p.byWidth) {
		var prev *memoJob
		if memo != nil {
			if m := memo.jobs[job.Req.ID]; m != nil && reflect.DeepEqual(m.req, job.Req) {
				prev = m
			}
		}
		mj, err := p.tryAll(job, env, &sp, prev, &ks)
		if err != nil {
			return nil, fmt.Errorf("%s: job %s: %w", p.name, job.Req.ID, err)
		}
		mj.pick = p.choose(job, mj.cands, env)
		next[job.Req.ID] = mj
		if mj.pick < 0 {
			out = append(out, forecast.Allocation{Job: job.Req.ID, Error: noRoom(mj.cands)})
			continue
		}
		c := mj.cands[mj.pick]
		req := setRequest(job, c.sites)
		sp.take(req, c.alloc)
		ks.took(req, c.alloc, env)
		out = append(out, c.alloc)
	}
	if memo != nil {
		memo.now, memo.fcs, memo.jobs = now, fcs, next
	}
	return out, nil
}

// tryAll tries the job on each of its site sets, keeping the last cycle's
// candidate where that is exact.
func (p perJob) tryAll(job GridJob, env Env, sp *setPools, prev *memoJob, ks *keeping) (*memoJob, error) {
	sets := p.sets(job, env)
	mj := &memoJob{req: job.Req, cands: make([]candidate, 0, len(sets)), keys: make([]string, 0, len(sets))}
	for i, set := range sets {
		key, same := ks.key(set)
		mj.keys = append(mj.keys, key)
		if same && prev != nil && i < len(prev.cands) && prev.keys[i] == key && prev.keep(i, set, ks.now, ks.sameHorizon(set)) {
			mj.cands = append(mj.cands, prev.cands[i])
			continue
		}
		pool, err := sp.get(set)
		if err != nil {
			return nil, err
		}
		mj.cands = append(mj.cands, candidate{sites: set, alloc: pool.Try(setRequest(job, set))})
	}
	return mj, nil
}

// keeping is what a cycle of a per-job strategy knows of its sites against
// the memo: which sites have last cycle's slots from now to the nearer
// horizon, and per site a digest of what the jobs planned so far took
// there, in order.
type keeping struct {
	now     int64
	memo    *planMemo
	fcs     []forecast.Forecast
	same    []bool
	digests [][sha256.Size]byte
}

func newKeeping(memo *planMemo, fcs []forecast.Forecast, now int64) keeping {
	k := keeping{now: now, memo: memo, fcs: fcs, same: make([]bool, len(fcs)), digests: make([][sha256.Size]byte, len(fcs))}
	if memo == nil || memo.fcs == nil || now < memo.now || len(memo.fcs) != len(fcs) {
		return k
	}
	for i := range fcs {
		k.same[i] = sameSite(&memo.fcs[i], &fcs[i], now)
	}
	return k
}

// key is the set's sites' digests; same says all of them have last
// cycle's slots.
func (k *keeping) key(set []int) (string, bool) {
	var b strings.Builder
	same := true
	for _, i := range set {
		b.Write(k.digests[i][:])
		same = same && k.same[i]
	}
	return b.String(), same
}

func (k *keeping) sameHorizon(set []int) bool {
	for _, i := range set {
		if k.memo.fcs[i].Horizon != k.fcs[i].Horizon {
			return false
		}
	}
	return true
}

// took adds an allocation to the digests of the sites it uses.
func (k *keeping) took(req forecast.JobRequest, a forecast.Allocation, env Env) {
	for i, info := range env.Sites {
		buf := append([]byte(nil), k.digests[i][:]...)
		buf = binary.AppendUvarint(buf, uint64(len(req.ID)))
		buf = append(buf, req.ID...)
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(req.MaxPrice))
		buf = binary.AppendVarint(buf, a.Start)
		buf = binary.AppendVarint(buf, a.End)
		used := false
		for _, pt := range a.Parts {
			if pt.Site == info.Name {
				used = true
				buf = binary.AppendUvarint(buf, uint64(len(pt.Node)))
				buf = append(buf, pt.Node...)
				buf = binary.AppendVarint(buf, int64(pt.Procs))
			}
		}
		if used {
			k.digests[i] = sha256.Sum256(buf)
		}
	}
}

// planMemo is what a strategy keeps of its last cycle in one run. For the
// per-job strategies, a job's candidate on a site set is kept when the
// job's request is the same, every site of the set has last cycle's slots
// from now to the nearer of its two horizons, and the jobs planned before
// it this cycle took on those sites exactly what the jobs before it took
// last cycle (keeping.key): then its pool holds the same there, and
//
//   - a candidate that was placed starting no earlier than now is still
//     the answer: it is the job's earliest finish on the set with exact
//     tiers; time passing only removes allocations starting before now,
//     which ranked after it (they start earlier, so they ended later), and
//     slots gained beyond the old horizon only allow allocations ending
//     after it, which rank after it too;
//   - a candidate refused for want of capacity is still refused when the
//     set's horizons did not move (losing starts never makes a job fit).
//
// Anything else is tried again.
type planMemo struct {
	now  int64
	fcs  []forecast.Forecast
	jobs map[string]*memoJob // per-job strategies, by job id
	// placed are the lookahead strategies' answers (lookahead.go).
	placed []memoPlaced
	// inc is the lookahead strategies' incremental planner (lookahead.go).
	inc *coalloc.Incremental
}

type memoJob struct {
	req   forecast.JobRequest
	cands []candidate
	keys  []string // per candidate, its sites' digests when it was tried
	pick  int
}

// keep: the last cycle's candidate i was for the same set, and placed
// starting no earlier than now, or refused for want of capacity while the
// set's sites' horizons stayed where they were (time passing never makes a
// job fit).
func (m *memoJob) keep(i int, set []int, now int64, sameHorizon bool) bool {
	c := m.cands[i]
	if setKey(c.sites) != setKey(set) {
		return false
	}
	if !c.alloc.Placed() {
		return sameHorizon && c.alloc.Error == coalloc.NoFitCapacity
	}
	return c.alloc.Start >= now
}

// sameSite: the same site and nodes, and the slots cut to [now, the nearer
// horizon) the same, in the same order.
func sameSite(a, b *forecast.Forecast, now int64) bool {
	if a.Site != b.Site || !reflect.DeepEqual(a.Nodes, b.Nodes) {
		return false
	}
	lim := min(a.Horizon, b.Horizon)
	return slices.Equal(cut(a.Slots, now, lim), cut(b.Slots, now, lim))
}

// horizon is the nearer of each site's two horizons, the earliest of all
// (the slots compared by sameSite end there).
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

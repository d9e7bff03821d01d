package coalloc

import (
	"math"

	"lookahead/forecast"
)

// observer records, while the pool places one job, what the answer can
// depend on and what it took. Place itself is a black box to it: every
// earliest-start search goes through Pool.stage1, and every piece taken
// through Pool.addPieces.
type observer struct {
	// lower: no search found a feasible start before it. The first search
	// of a job is unbounded from NotBefore, so no feasible allocation of
	// the job starts before lower (MaxInt64 when none was found).
	lower int64
	// reach: no search read slot time at or after it (a search that found
	// t read [NotBefore, t+dur); one bounded by limit read up to
	// limit+dur; an unbounded one that found nothing read everything).
	reach int64
	taken []taken
	// wins are the windows of the searches that found a start (the bound
	// search excepted): what the answer's candidates were judged on.
	wins []window
	// expires: the answer holds only while NotBefore is at most it
	// (the free window since submission, which shrinks with time; MaxInt64: no such bound).
	expires int64
}

// window is one search's answer: its start over [from, to) on the nodes
// at least tier fast (and meeting the job's requirements).
type window struct {
	tier     float64
	from, to int64
}

// taken is a piece a placement took (negative procs) on node of site (by
// name: pools of other cycles number sites and nodes otherwise).
type taken struct {
	site string
	node string
	pc   piece
}

// observe makes the pool report to o from now on; nil stops it. The
// search hook is installed once.
func (p *Pool) observe(o *observer) {
	if o != nil {
		*o = observer{lower: math.MaxInt64, reach: math.MinInt64, expires: math.MaxInt64}
	}
	if p.obs == nil && o != nil && !p.hooked {
		inner := p.stage1
		p.stage1 = func(sp sweepSpec) (int64, bool) {
			t, ok := inner(sp)
			if p.obs != nil {
				p.obs.searched(sp, t, ok)
			}
			return t, ok
		}
		p.hooked = true
	}
	p.obs = o
}

func (o *observer) searched(sp sweepSpec, t int64, ok bool) {
	switch {
	case ok:
		o.lower = min(o.lower, t)
		o.reach = max(o.reach, addSat(t, sp.dur))
		if !sp.track {
			o.wins = append(o.wins, window{tier: sp.tier, from: t, to: addSat(t, sp.dur)})
		}
	case sp.limit == math.MaxInt64:
		o.reach = math.MaxInt64
	default:
		o.reach = max(o.reach, addSat(sp.limit, sp.dur))
	}
}

func (o *observer) took(site, node string, pcs []piece) {
	for _, pc := range pcs {
		o.taken = append(o.taken, taken{site: site, node: node, pc: pc})
	}
}

// placeWatched plans job like Place and reports what the answer read.
func (p *Pool) placeWatched(job forecast.JobRequest, o *observer) forecast.Allocation {
	p.observe(o)
	defer p.observe(nil)
	return p.Place(job)
}

func (o *observer) expire(t int64) { o.expires = min(o.expires, t) }

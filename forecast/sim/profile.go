package sim

import "math"

// never is the end of time for profiles.
const never = math.MaxInt64

// step says that free processors are available from t until the next step.
type step struct {
	t    int64
	free int
}

// profile is a step function of free processors over [now, ∞): steps are
// sorted by t, the first is at now, the last extends to infinity.
type profile struct {
	steps []step
}

// reset makes the profile a constant free from now on.
func (p *profile) reset(now int64, free int) {
	p.steps = append(p.steps[:0], step{t: now, free: free})
}

// add changes the free processors by delta over [s, e); s must be >= the
// first step's time.
func (p *profile) add(s, e int64, delta int) {
	if e <= s || delta == 0 {
		return
	}
	i := p.split(s)
	j := len(p.steps)
	if e != never {
		j = p.split(e)
	}
	for k := i; k < j; k++ {
		p.steps[k].free += delta
	}
}

// split makes sure a step starts at t and returns its index.
func (p *profile) split(t int64) int {
	i := p.search(t)
	if i < len(p.steps) && p.steps[i].t == t {
		return i
	}
	// steps[i-1].t < t < steps[i].t
	p.steps = append(p.steps, step{})
	copy(p.steps[i+1:], p.steps[i:])
	p.steps[i] = step{t: t, free: p.steps[i-1].free}
	return i
}

// search returns the first index whose time is >= t.
func (p *profile) search(t int64) int {
	lo, hi := 0, len(p.steps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.steps[m].t < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// fitsAt reports whether procs are free over [t, t+d) where t is the time
// of step i.
func (p *profile) fitsFrom(i int, procs int, d int64) (bool, int) {
	end := sat(p.steps[i].t, d)
	for k := i; k < len(p.steps) && p.steps[k].t < end; k++ {
		if p.steps[k].free < procs {
			return false, k
		}
	}
	return true, 0
}

// earliest returns the earliest time >= from at which procs are free for
// d seconds, or never when the profile never frees that many.
func (p *profile) earliest(from int64, procs int, d int64) int64 {
	i := p.search(from)
	if i > 0 && (i == len(p.steps) || p.steps[i].t > from) {
		// from falls inside step i-1: try from itself first
		if ok, _ := p.fitsRange(from, i-1, procs, d); ok {
			return from
		}
	}
	for i < len(p.steps) {
		ok, bad := p.fitsFrom(i, procs, d)
		if ok {
			return p.steps[i].t
		}
		i = bad + 1
	}
	return never
}

// fitsRange checks [t, t+d) starting inside step i.
func (p *profile) fitsRange(t int64, i int, procs int, d int64) (bool, int) {
	end := sat(t, d)
	for k := i; k < len(p.steps) && p.steps[k].t < end; k++ {
		if p.steps[k].free < procs {
			return false, k
		}
	}
	return true, 0
}

// sat is t+d without overflow.
func sat(t, d int64) int64 {
	if d >= never-t {
		return never
	}
	return t + d
}

// nextAfter is the time of the first step after t (never when none).
func (p *profile) nextAfter(t int64) int64 {
	i := p.search(t + 1)
	if i == len(p.steps) {
		return never
	}
	return p.steps[i].t
}

package broker

import "math"

// ledger keeps, per budget holder, what admission checks on every
// submission: how many of its jobs are active and what it has spent or
// holds. Without it each submission walked the whole queue three times
// (O(n²) to fill a queue of n jobs). It is updated as events apply
// (State.Apply, Forget, FromSnapshot), so it always equals what a walk
// over the jobs would count: the active counts exactly, the spend as the
// correctly rounded sum of spent[h] and every job's spend (exactSum), the
// same whatever order the jobs came and went in. Not safe for concurrent
// use (it is the State's).
type ledger map[holder]*holderTotal

// holderTotal is one holder's running totals.
type holderTotal struct {
	active int
	// spend is spent[h] (forgotten jobs) plus spend(j) over h's jobs the
	// state holds, summed exactly.
	spend exactSum
}

// share is what one job counts for in its holders' totals.
type share struct {
	active bool
	spend  float64
}

func shareOf(j *Job) share { return share{active: j.Active(), spend: spend(j)} }

// holders are the budget holders a job counts for: its account and its
// user (each only when named).
func holdersOf(j *Job) []holder {
	out := make([]holder, 0, 2)
	if j.Req.Account != "" {
		out = append(out, holder{"account", j.Req.Account})
	}
	if j.Req.User != "" {
		out = append(out, holder{"user", j.Req.User})
	}
	return out
}

func (l ledger) total(h holder) *holderTotal {
	t := l[h]
	if t == nil {
		t = &holderTotal{}
		l[h] = t
	}
	return t
}

// add counts sh for j's holders (sign +1), or takes it back (sign -1).
func (l ledger) add(j *Job, sh share, sign int) {
	if !sh.active && sh.spend == 0 {
		return
	}
	for _, h := range holdersOf(j) {
		t := l.total(h)
		if sh.active {
			t.active += sign
		}
		if sh.spend != 0 {
			t.spend.add(float64(sign) * sh.spend)
		}
	}
}

// moved updates j's holders after j changed from before to its share now.
func (l ledger) moved(j *Job, before share) {
	if after := shareOf(j); after != before {
		l.add(j, before, -1)
		l.add(j, after, +1)
	}
}

// spentChanged records that spent[h] went from old to now.
func (l ledger) spentChanged(h holder, old, now float64) {
	t := l.total(h)
	t.spend.add(now)
	t.spend.add(-old)
}

func (l ledger) active(h holder) int {
	if t := l[h]; t != nil {
		return t.active
	}
	return 0
}

func (l ledger) used(h holder) float64 {
	if t := l[h]; t != nil {
		return t.spend.value()
	}
	return 0
}

// exactSum is a sum of float64 values kept exactly, as non-overlapping
// partials (Shewchuk's algorithm, as Python's math.fsum): adding and
// taking back values in any order leaves no rounding error behind, and
// value is the exact sum rounded once to the nearest float64 (ties to
// even). The values must be finite and their partial sums below 2^1023.
type exactSum struct{ partials []float64 }

func (s *exactSum) add(x float64) {
	i := 0
	for _, y := range s.partials {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			s.partials[i] = lo
			i++
		}
		x = hi
	}
	s.partials = s.partials[:i]
	if x != 0 {
		s.partials = append(s.partials, x)
	}
}

// value is the sum rounded to the nearest float64.
func (s *exactSum) value() float64 {
	p := s.partials
	n := len(p)
	if n == 0 {
		return 0
	}
	hi, lo := p[n-1], 0.0
	i := n - 1
	for i > 0 {
		x, y := hi, p[i-1]
		i--
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// hi+lo is exact; when lo is half an ulp of hi, the partials below it
	// decide which way the exact sum rounds.
	if i > 0 && ((lo < 0 && p[i-1] < 0) || (lo > 0 && p[i-1] > 0)) {
		y := lo * 2
		x := hi + y
		if x-hi == y {
			hi = x
		}
	}
	return hi
}

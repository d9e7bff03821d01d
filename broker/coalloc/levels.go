package coalloc

import (
	"cmp"
	"math"
	"slices"
)

// A node's processors over a window, by price level: the window is cut at
// every piece edge into segments, and each segment lists its price levels
// (cheapest first) with the processors available at that price.

type level struct {
	price float64
	procs int64
}

type segment struct {
	from, to int64
	levels   []level
}

// profile is node n over [from, to) counting pieces priced at most maxPrice.
func (p *Pool) profile(n int32, from, to int64, maxPrice float64) []segment {
	maxPrice = p.capAt(n, maxPrice)
	var in []piece
	cuts := []int64{from, to}
	for _, pc := range p.nodes[n].pieces {
		if pc.end <= from || pc.start >= to || pc.price > maxPrice {
			continue
		}
		in = append(in, pc)
		if pc.start > from {
			cuts = append(cuts, pc.start)
		}
		if pc.end < to {
			cuts = append(cuts, pc.end)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	segs := make([]segment, 0, len(cuts)-1)
	for i := 0; i+1 < len(cuts); i++ {
		s := segment{from: cuts[i], to: cuts[i+1]}
		for _, pc := range in {
			if pc.start <= s.from && s.from < pc.end {
				s.levels = addLevel(s.levels, pc.price, pc.procs)
			}
		}
		s.levels = slices.DeleteFunc(s.levels, func(l level) bool { return l.procs <= 0 })
		slices.SortFunc(s.levels, func(a, b level) int { return cmp.Compare(a.price, b.price) })
		segs = append(segs, s)
	}
	return segs
}

func addLevel(ls []level, price float64, procs int64) []level {
	for i := range ls {
		if ls[i].price == price {
			ls[i].procs += procs
			return ls
		}
	}
	return append(ls, level{price: price, procs: procs})
}

// appendRuns splits the first capacity processors of node n into runs of
// equal unit cost (credits for one processor over the window).
func (p *Pool) appendRuns(out []run, n int32, capacity, from, to int64, maxPrice float64) []run {
	if pc, ok := p.soleCover(n, from, to, maxPrice); ok {
		// The common case: one suitable piece covers the whole window.
		return append(out, run{node: n, procs: min(capacity, pc.procs), unit: float64(to-from) * pc.price / 3600})
	}
	segs := p.profile(n, from, to, maxPrice)
	idx := make([]int, len(segs))    // current level per segment
	used := make([]int64, len(segs)) // processors used in that level
	for k := int64(0); k < capacity; {
		chunk := capacity - k
		unit := 0.0
		for i, s := range segs {
			if idx[i] >= len(s.levels) {
				return out // cannot happen when capacity is right
			}
			l := s.levels[idx[i]]
			chunk = min(chunk, l.procs-used[i])
			unit += float64(s.to-s.from) * l.price / 3600
		}
		out = append(out, run{node: n, procs: chunk, unit: unit})
		k += chunk
		for i, s := range segs {
			if used[i] += chunk; used[i] == s.levels[idx[i]].procs {
				idx[i]++
				used[i] = 0
			}
		}
	}
	return out
}

// soleCover reports the only suitable piece of node n that overlaps
// [from, to), when there is exactly one and it covers the whole window.
func (p *Pool) soleCover(n int32, from, to int64, maxPrice float64) (piece, bool) {
	maxPrice = p.capAt(n, maxPrice)
	var found piece
	count := 0
	for _, pc := range p.nodes[n].pieces {
		if pc.end <= from || pc.start >= to || pc.price > maxPrice {
			continue
		}
		if count++; count > 1 {
			return piece{}, false
		}
		found = pc
	}
	return found, count == 1 && found.procs > 0 && found.start <= from && found.end >= to
}

// takeCheapest takes procs processors in every segment, cheapest level
// first, and returns what it took as negative pieces (adjacent equal ones
// merged) with their cost.
func takeCheapest(segs []segment, procs int64) ([]piece, float64) {
	var out []piece
	var cost float64
	for _, s := range segs {
		need := procs
		for _, l := range s.levels {
			if need == 0 {
				break
			}
			q := min(need, l.procs)
			need -= q
			cost += float64(q) * float64(s.to-s.from) * l.price / 3600
			out = appendMerged(out, piece{start: s.from, end: s.to, procs: -q, price: l.price})
		}
	}
	return out, cost
}

func appendMerged(out []piece, pc piece) []piece {
	for i := len(out) - 1; i >= 0 && out[i].end >= pc.start; i-- {
		if out[i].end == pc.start && out[i].price == pc.price && out[i].procs == pc.procs {
			out[i].end = pc.end
			return out
		}
	}
	return append(out, pc)
}

// total is the processors of every level of the segment.
func (s segment) total() int64 {
	var n int64
	for _, l := range s.levels {
		n += l.procs
	}
	return n
}

// capAt is the dearest price a job of max price maxPrice may take on node
// n: maxPrice, or during free-first's free pass (Pool.cut) the node's
// site's cut when lower.
func (p *Pool) capAt(n int32, maxPrice float64) float64 {
	if p.cut == nil {
		return maxPrice
	}
	r := p.cut[p.nodeSite[n]]
	if r < 0 {
		return math.Inf(-1)
	}
	return min(maxPrice, p.prices[r])
}

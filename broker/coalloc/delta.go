package coalloc

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"lookahead/forecast"
)

// delta is what the incremental planner knows of the difference between
// the slots left for a job this cycle and the slots left for it when its
// cached answer was made: per node of the pool and price, a signed step
// function over time (from the cycle's NotBefore on) of processors gained
// (> 0) or lost (< 0). It is exact: it sums the forecasts' differences and
// the pieces taken by jobs whose answers differ, so where those cancel
// (a job committed: its hold leaves the forecast and its placement leaves
// the queue) nothing remains.
type delta struct {
	from      int64
	nodeClass []int32 // the pool's
	edges     map[dkey][]dedge
	// first is, per nonzero key, where its difference is nonzero.
	first map[dkey]dfirst
	// byClass summarises first per node class: the Pareto front of
	// (price, earliest instant), rebuilt after a change while the
	// difference is small (exactBelow keys); beyond, a change inserts the
	// key's new instants (settle), and an instant that moved later stays
	// in the front until the next rebuild (stale: the summary may then say
	// a job is touched when it is not, never the reverse), which happens
	// once stale changes outnumber a quarter of the keys.
	byClass map[int32]*classFront
	dirty   bool
	stale   int
	// work counts the keys hits has looked at (see maxHitWork).
	work int
	// gone is what sites that left the pool offered: per node kind and
	// price, the earliest instant (losses only; their nodes have no index
	// in this pool).
	gone map[goneKey]int64
}

type goneKey struct {
	speed    float64
	memMB    int64
	features string // sorted, joined by NUL
	price    float64
}

type dkey struct {
	node  int32
	price float64
}

type dedge struct{ at, procs int64 }

// dfirst: the difference is zero before any and from last on; pos is the
// earliest instant it is positive.
type dfirst struct{ any, last, pos int64 }

// classFront is, for one node class, the Pareto fronts of (price, first
// instant) over the class's nonzero keys: sorted by ascending price with
// strictly falling instants, so the earliest instant at or below a price
// is the last entry at or below it.
type classFront struct{ any, pos []front }

type front struct {
	price float64
	at    int64
}

func newDelta(from int64, nodeClass []int32) *delta {
	return &delta{from: from, nodeClass: nodeClass, edges: map[dkey][]dedge{}, first: map[dkey]dfirst{}}
}

// add changes node n's difference at price by procs over [start, end).
func (d *delta) add(n int32, price float64, start, end, procs int64) {
	start = max(start, d.from)
	if end <= start || procs == 0 {
		return
	}
	k := dkey{node: n, price: price}
	d.edges[k] = append(d.edges[k], dedge{at: start, procs: procs}, dedge{at: end, procs: -procs})
	d.settle(k)
}

// addEdges adds edges (each at or after from) to key k's difference.
func (d *delta) addEdges(k dkey, es []dedge) {
	d.edges[k] = append(d.edges[k], es...)
	d.settle(k)
}

// addAll adds each key's edges (merged: sorted, one per instant, none
// zero; the slices become the delta's) to the difference; on an empty
// difference the maps are sized once.
func (d *delta) addAll(ps []pending) {
	if len(d.edges) == 0 && len(ps) > 8 {
		d.edges, d.first = make(map[dkey][]dedge, len(ps)), make(map[dkey]dfirst, len(ps))
	}
	for _, p := range ps {
		if _, had := d.edges[p.k]; had {
			d.addEdges(p.k, p.es)
			continue
		}
		d.edges[p.k] = p.es
		f := firstOf(p.es)
		d.first[p.k] = f
		d.moved(p.k, dfirst{}, false, f)
	}
}

// settle merges key k's edges and recomputes where it is nonzero.
func (d *delta) settle(k dkey) {
	es := d.edges[k]
	slices.SortFunc(es, func(a, b dedge) int { return cmp.Compare(a.at, b.at) })
	out := es[:0]
	for _, e := range es {
		if n := len(out); n > 0 && out[n-1].at == e.at {
			out[n-1].procs += e.procs
			if out[n-1].procs == 0 {
				out = out[:n-1]
			}
			continue
		}
		out = append(out, e)
	}
	old, had := d.first[k]
	if len(out) == 0 {
		delete(d.edges, k)
		delete(d.first, k)
		d.moved(k, old, had, dfirst{any: math.MaxInt64, pos: math.MaxInt64})
		return
	}
	d.edges[k] = out
	f := firstOf(out)
	d.first[k] = f
	d.moved(k, old, had, f)
}

// firstOf says where merged, nonzero edges make a difference.
func firstOf(es []dedge) dfirst {
	f := dfirst{any: es[0].at, last: es[len(es)-1].at, pos: math.MaxInt64}
	var sum int64
	for _, e := range es {
		if sum += e.procs; sum > 0 {
			f.pos = e.at
			break
		}
	}
	return f
}

// exactBelow: a difference of fewer keys has its summary rebuilt after
// every change (exact, and cheap at that size).
const exactBelow = 512

// moved updates the per-class summary for key k, whose instants went
// from old (when had) to f: earlier instants are inserted, later ones
// leave the summary stale until the next rebuild.
func (d *delta) moved(k dkey, old dfirst, had bool, f dfirst) {
	if d.byClass == nil || d.dirty || len(d.first) < exactBelow {
		d.dirty = true
		return
	}
	if had && (f.any > old.any || f.pos > old.pos) {
		if d.stale++; d.stale > len(d.first)/4+64 {
			d.dirty = true
			return
		}
	}
	c := d.nodeClass[k.node]
	cf := d.byClass[c]
	if cf == nil {
		cf = &classFront{}
		d.byClass[c] = cf
	}
	if f.any != math.MaxInt64 {
		cf.any = insertFront(cf.any, front{price: k.price, at: f.any})
	}
	if f.pos != math.MaxInt64 {
		cf.pos = insertFront(cf.pos, front{price: k.price, at: f.pos})
	}
}

// insertFront adds f to a Pareto front (ascending price, strictly falling
// instants) unless an entry at or below its price is at or before it;
// entries at or above its price and at or after it are dropped.
func insertFront(fr []front, f front) []front {
	k, _ := slices.BinarySearchFunc(fr, f.price, func(e front, p float64) int { return cmp.Compare(e.price, p) })
	if k > 0 && fr[k-1].at <= f.at {
		return fr
	}
	if k < len(fr) && fr[k].price == f.price && fr[k].at <= f.at {
		return fr
	}
	j := k
	for j < len(fr) && fr[j].at >= f.at {
		j++
	}
	return slices.Replace(fr, k, j, f)
}

// left records the slots of a site that left the pool as lost.
func (d *delta) left(nodes []forecast.Node, slots []forecast.Slot) {
	kind := make(map[string]goneKey, len(nodes))
	for _, n := range nodes {
		feats := slices.Clone(n.Features)
		slices.Sort(feats)
		kind[n.Name] = goneKey{speed: n.Speed, memMB: n.MemMB, features: strings.Join(slices.Compact(feats), "\x00")}
	}
	if d.gone == nil {
		d.gone = map[goneKey]int64{}
	}
	for _, s := range slots {
		k, ok := kind[s.Node]
		if !ok || s.End <= d.from || s.Procs == 0 {
			continue
		}
		k.price = s.Price
		at := max(s.Start, d.from)
		if f, seen := d.gone[k]; !seen || at < f {
			d.gone[k] = at
		}
	}
}

// lostGone reports whether a site that left offered, before reach, slots
// the job may use (a loss: it does not matter to a job that did not fit).
func (d *delta) lostGone(job forecast.JobRequest, reach int64) bool {
	for k, at := range d.gone {
		if at < reach && k.price <= job.MaxPrice && k.speed >= job.MinSpeed && k.memMB >= job.MemMB &&
			hasAll(splitFeatures(k.features), job.Features) {
			return true
		}
	}
	return false
}

// touches reports whether a job whose answer reads the slots before reach
// on nodes of the classes ok at prices up to maxPrice may answer otherwise
// now: for a job that did not fit (gainOnly), only processors gained can
// change that; for any other answer, any difference can.
func (d *delta) touches(classes []bool, maxPrice float64, reach int64, gainOnly bool) bool {
	if len(d.first) == 0 {
		return false
	}
	d.rebuild()
	for c, cf := range d.byClass {
		if !classes[c] {
			continue
		}
		fr := cf.any
		if gainOnly {
			fr = cf.pos
		}
		// the last entry priced at or below maxPrice has the earliest instant
		i, _ := slices.BinarySearchFunc(fr, maxPrice, func(f front, p float64) int {
			if f.price <= p {
				return -1
			}
			return 1
		})
		if i > 0 && fr[i-1].at < reach {
			return true
		}
	}
	return false
}

// hits reports whether a nonzero difference priced up to maxPrice
// overlaps [from, to) on a node for which on(node) holds.
func (d *delta) hits(on func(int32) bool, maxPrice float64, from, to int64) bool {
	d.work += len(d.first)
	for k, f := range d.first {
		if k.price <= maxPrice && f.any < to && f.last > from && on(k.node) {
			return true
		}
	}
	return false
}

func (d *delta) rebuild() {
	if !d.dirty && d.byClass != nil {
		return
	}
	d.dirty, d.stale = false, 0
	byClass := map[int32][]dentry{}
	for k, f := range d.first {
		c := d.nodeClass[k.node]
		byClass[c] = append(byClass[c], dentry{price: k.price, f: f})
	}
	d.byClass = make(map[int32]*classFront, len(byClass))
	for c, es := range byClass {
		slices.SortFunc(es, func(a, b dentry) int { return cmp.Compare(a.price, b.price) })
		cf := &classFront{}
		for _, e := range es {
			cf.any = pushFront(cf.any, front{price: e.price, at: e.f.any})
			if e.f.pos != math.MaxInt64 {
				cf.pos = pushFront(cf.pos, front{price: e.price, at: e.f.pos})
			}
		}
		d.byClass[c] = cf
	}
}

type dentry struct {
	price float64
	f     dfirst
}

// pushFront appends f (priced at or above every entry) when it is earlier
// than every entry; an entry of the same price is replaced.
func pushFront(fr []front, f front) []front {
	if n := len(fr); n > 0 {
		if fr[n-1].at <= f.at {
			return fr
		}
		if fr[n-1].price == f.price {
			fr[n-1] = f
			return fr
		}
	}
	return append(fr, f)
}

func splitFeatures(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

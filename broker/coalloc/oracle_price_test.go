package coalloc

import (
	"fmt"
	"math"
	"slices"

	"lookahead/forecast"
)

// The economic half of the oracle: what the cheapest way to hold P
// processors over a window costs, from the v1 slots alone. Over a window a
// node's k-th processor costs the sum, over the window's segments, of the
// price of the k-th cheapest processor there (its marginal cost, which
// grows with k); taking the P smallest marginal costs of all usable nodes
// is the cheapest choice, since each node's marginal costs are sorted.

// marginals lists the marginal cost of each processor node n can give over
// [a, b) at prices up to maxPrice, cheapest first.
func marginals(slots []forecast.Slot, a, b int64, maxPrice float64) []float64 {
	capacity := minOver(slots, a, b, maxPrice)
	out := make([]float64, capacity)
	pts := append(points(slots, a, b), b)
	for i := 0; i+1 < len(pts); i++ {
		u, length := pts[i], float64(pts[i+1]-pts[i])
		var units []float64 // one price per processor at u, cheapest first
		for _, s := range slots {
			if s.Price <= maxPrice && s.Start <= u && u < s.End {
				for range s.Procs {
					units = append(units, s.Price)
				}
			}
		}
		slices.Sort(units)
		for k := range out {
			out[k] += length * units[k] / 3600
		}
	}
	return out
}

// oMinCost is the least the job can pay for its processors over [a, b) on
// the nodes of the sites in mask that meet it and are at least speed fast
// (+Inf when they cannot hold it).
func oMinCost(nodes map[string]*oNode, job forecast.JobRequest, mask int, speed float64, a, b int64) float64 {
	var all []float64
	for _, n := range nodes {
		if mask&(1<<n.site) != 0 && meets(n.node, job) && n.node.Speed >= speed {
			all = append(all, marginals(n.slots, a, b, job.MaxPrice)...)
		}
	}
	if len(all) < job.Procs {
		return math.Inf(1)
	}
	slices.Sort(all)
	var c float64
	for _, x := range all[:job.Procs] {
		c += x
	}
	return c
}

func costEqual(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// checkCheapestParts: the allocation's processors are the cheapest its own
// sites could give over its window among nodes at least as fast as its
// slowest part (a cheaper choice of those would hold just as long).
func checkCheapestParts(before []forecast.Forecast, job forecast.JobRequest, a forecast.Allocation) error {
	nodes := oNodes(before)
	mask, slowest := 0, math.Inf(1)
	for _, pt := range a.Parts {
		n := nodes[pt.Site+"/"+pt.Node]
		mask |= 1 << n.site
		slowest = min(slowest, n.node.Speed)
	}
	if want := oMinCost(nodes, job, mask, slowest, a.Start, a.End); !costEqual(a.Cost, want) {
		return fmt.Errorf("cost %v, the cheapest processors of its sites over its window cost %v", a.Cost, want)
	}
	return nil
}

// checkLeastHeld checks a least-held allocation against every earliest
// placement of every site subset and speed threshold: it finishes within
// the tolerance of the earliest finish, holds the least work of those that
// do, finishes earliest of those that hold that little, spans the fewest
// sites of those, and no set of as many sites offers that finish for less (across sites, not only within
// the sites it chose).
//
// A free-first job is checked the same way over the placements that take
// only free time — at each site the slots priced at or below that site's
// free price (free: its forecast's free_price, else the lowest price of the
// cycle's forecasts) — and end within the free tolerance of the earliest
// finish at its max_price, when there are any (then the tolerance applies
// to the earliest of those, and the cost to the cheapest free processors).
func checkLeastHeld(before []forecast.Forecast, job forecast.JobRequest, a forecast.Allocation, opts Options, free map[string]float64) error {
	places := oraclePlacements(before, job, opts)
	earliest := int64(math.MaxInt64)
	for _, pl := range places {
		earliest = min(earliest, pl.end)
	}
	last := earliest + int64(math.Floor(opts.Tolerance*float64(job.Walltime)))
	if job.CriterionOrDefault() == forecast.FreeFirst {
		cut := freeOnly(before, job.MaxPrice, free)
		in := freePlacements(cut, job, opts, earliest)
		if len(in) > 0 {
			places, before = in, cut
			e := int64(math.MaxInt64)
			for _, pl := range in {
				e = min(e, pl.end)
			}
			lastFree := earliest + int64(math.Floor(opts.FreeTolerance*float64(job.Walltime)))
			last = min(lastFree, e+int64(math.Floor(opts.Tolerance*float64(job.Walltime))))
		}
	}
	// Work per processor, reference seconds: it depends on the site count.
	work := func(sites int) float64 {
		w := float64(job.Walltime)
		if sites > 1 {
			w = w*max(1, opts.MultiSiteFactor) + float64(sites-1)*float64(opts.StagingDelay)
		}
		return w
	}
	least, end := math.Inf(1), int64(math.MaxInt64)
	for _, pl := range places {
		w := work(popcount(pl.mask))
		if pl.end <= last && (w < least || (w == least && pl.end < end)) {
			least, end = w, pl.end
		}
	}
	if got := work(len(a.Sites())); got != least || a.End != end {
		return fmt.Errorf("ends %d holding %v s of work per processor, oracle's least within %d is %v ending at %d", a.End, got, last, least, end)
	}
	fewest := math.MaxInt
	for _, pl := range places {
		if work(popcount(pl.mask)) == least && pl.end == end {
			fewest = min(fewest, popcount(pl.mask))
		}
	}
	if len(a.Sites()) != fewest {
		return fmt.Errorf("%d site(s), the oracle holds as little and ends as soon on %d", len(a.Sites()), fewest)
	}
	nodes := oNodes(before)
	cheapest, m := math.Inf(1), len(a.Sites())
	for _, pl := range places {
		if popcount(pl.mask) == m && pl.end == end {
			cheapest = min(cheapest, oMinCost(nodes, job, pl.mask, pl.speed, end-pl.held, end))
		}
	}
	if !costEqual(a.Cost, cheapest) {
		return fmt.Errorf("cost %v on %d site(s), the cheapest set of %d site(s) with the same hold and finish costs %v", a.Cost, m, m, cheapest)
	}
	return nil
}

// checkEarliestCost checks an earliest-start or earliest-finish allocation
// for cost: no placement with the same criterion value (the same start
// and end: the criterion and its tie on the other instant) over as many
// sites, whichever set of sites and speed threshold, costs less (across
// sites, not only within the sites it chose). Every such placement is the
// earliest of its site set and speed (oraclePlacements): one that started
// or ended earlier would beat the optimum.
func checkEarliestCost(before []forecast.Forecast, job forecast.JobRequest, a forecast.Allocation, opts Options) error {
	nodes := oNodes(before)
	cheapest, m := math.Inf(1), len(a.Sites())
	for _, pl := range oraclePlacements(before, job, opts) {
		if popcount(pl.mask) == m && pl.start == a.Start && pl.end == a.End {
			cheapest = min(cheapest, oMinCost(nodes, job, pl.mask, pl.speed, a.Start, a.End))
		}
	}
	if !costEqual(a.Cost, cheapest) {
		return fmt.Errorf("cost %v on %d site(s), the cheapest placement over [%d,%d) on %d site(s) costs %v", a.Cost, m, a.Start, a.End, m, cheapest)
	}
	return nil
}

// oFreePrices is each site's free price for free-first: its forecast's
// free_price, else the lowest price of the slots a pool planning from
// notBefore keeps, over every site.
func oFreePrices(fcs []forecast.Forecast, notBefore int64) map[string]float64 {
	low := math.Inf(1)
	for _, f := range fcs {
		for _, sl := range f.Slots {
			if sl.End > max(sl.Start, notBefore) {
				low = min(low, sl.Price)
			}
		}
	}
	out := map[string]float64{}
	for _, f := range fcs {
		out[f.Site] = low
		if f.FreePrice != 0 {
			out[f.Site] = f.FreePrice
		}
	}
	return out
}

// freePlacements are the oracle's placements on the free slots (cut) that
// end within the free tolerance of earliest, the earliest finish at the
// job's max_price.
func freePlacements(cut []forecast.Forecast, job forecast.JobRequest, opts Options, earliest int64) []oPlacement {
	var in []oPlacement
	lastFree := earliest + int64(math.Floor(opts.FreeTolerance*float64(job.Walltime)))
	for _, pl := range oraclePlacements(cut, job, opts) {
		if pl.end <= lastFree {
			in = append(in, pl)
		}
	}
	return in
}

// freeFits reports whether a free-first job takes free time only: some
// placement on free time ends within the free tolerance.
func freeFits(before []forecast.Forecast, job forecast.JobRequest, opts Options, free map[string]float64) bool {
	earliest := int64(math.MaxInt64)
	for _, pl := range oraclePlacements(before, job, opts) {
		earliest = min(earliest, pl.end)
	}
	return len(freePlacements(freeOnly(before, job.MaxPrice, free), job, opts, earliest)) > 0
}

// freeOnly is the forecasts with only the slots a free-first job of max
// price maxPrice takes in its free pass: at each site, those priced at or
// below the site's free price.
func freeOnly(fcs []forecast.Forecast, maxPrice float64, free map[string]float64) []forecast.Forecast {
	out := make([]forecast.Forecast, len(fcs))
	for i, f := range fcs {
		out[i] = f
		out[i].Slots = nil
		for _, sl := range f.Slots {
			if sl.Price <= min(maxPrice, free[f.Site]) {
				out[i].Slots = append(out[i].Slots, sl)
			}
		}
	}
	return out
}

// checkCheapest checks a cheapest allocation against the oracle's
// placements at every price the job could wait for. The bound is its
// deadline, else the free tolerance after the earliest finish; when
// nothing finishes by the deadline, the answer is the earliest finish.
// Otherwise it ends by the bound, on free time only when some placement
// on free time alone does, and for every price c (the slot prices up to
// max_price) and every placement on the slots priced at most c that ends
// by the bound (every site subset and speed threshold, each at its
// earliest start), it costs no more than that placement's processors
// would at c over its hold: the planner weighs each sweep's earliest start
// at every such price, and none of those allocations costs more.
func checkCheapest(before []forecast.Forecast, job forecast.JobRequest, a forecast.Allocation, opts Options, free map[string]float64, finish int64) error {
	bound := finish + int64(math.Floor(opts.FreeTolerance*float64(job.Walltime)))
	if job.Deadline > 0 {
		bound = job.Deadline
	}
	if bound < finish {
		if a.End != finish {
			return fmt.Errorf("nothing finishes by the deadline %d: ends %d, the earliest finish is %d", bound, a.End, finish)
		}
		return nil
	}
	if a.End > bound {
		return fmt.Errorf("ends %d, after the bound %d", a.End, bound)
	}
	judged := before
	if cut := freeOnly(before, job.MaxPrice, free); len(placementsBy(cut, job, opts, bound)) > 0 {
		judged = cut
	}
	var prices []float64
	for _, f := range judged {
		for _, sl := range f.Slots {
			if sl.Price <= job.MaxPrice {
				prices = append(prices, sl.Price)
			}
		}
	}
	slices.Sort(prices)
	for _, c := range slices.Compact(prices) {
		for _, pl := range placementsBy(capPrice(judged, c), job, opts, bound) {
			if most := c * float64(job.Procs) * float64(pl.held) / 3600; a.Cost > most && !costEqual(a.Cost, most) {
				return fmt.Errorf("cost %v, but on slots priced at most %v sites %b hold [%d,%d) by the bound %d for at most %v",
					a.Cost, c, pl.mask, pl.start, pl.end, bound, most)
			}
		}
	}
	return nil
}

// placementsBy are the oracle's placements on fcs that end by bound.
func placementsBy(fcs []forecast.Forecast, job forecast.JobRequest, opts Options, bound int64) []oPlacement {
	return slices.DeleteFunc(oraclePlacements(fcs, job, opts), func(pl oPlacement) bool { return pl.end > bound })
}

// capPrice is the forecasts with only their slots priced at most c.
func capPrice(fcs []forecast.Forecast, c float64) []forecast.Forecast {
	out := make([]forecast.Forecast, len(fcs))
	for i, f := range fcs {
		out[i] = f
		out[i].Slots = slices.DeleteFunc(slices.Clone(f.Slots), func(sl forecast.Slot) bool { return sl.Price > c })
	}
	return out
}

package coalloc

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"lookahead/forecast"
)

// piece is processors of one node at one price over [start, end). Slots
// become positive pieces; what a placed job took becomes a negative piece
// at the same node and price, so the available processors of a node at a
// price level at an instant are the sum of its pieces there (never < 0).
type piece struct {
	start, end int64
	procs      int64
	price      float64
}

type node struct {
	site   int
	name   string
	speed  float64
	pieces []piece
}

// class is what a job's requirements look at: nodes of one class are
// interchangeable for eligibility, so a job is checked per class.
type class struct {
	speed    float64
	memMB    int64
	features []string
}

type site struct {
	fc      forecast.Forecast // metadata only; Slots is nil
	nodes   []int32
	classes []int32 // the classes of its nodes, each once
	// free is the owner's free price (free-first's cut at this site): the
	// forecast's free_price, else the lowest slot price of the whole pool
	// (what free-first took as every owner's before forecasts stated it).
	free float64
}

// Pool holds every site's slots for one planning cycle, indexed for Place.
// Place consumes capacity; a Pool is not safe for concurrent use.
type Pool struct {
	opts      Options
	sites     []site
	nodes     []node
	classes   []class
	nodeClass []int32
	nodeSite  []int32
	ord       []int32   // node index -> forecast order (see renumber)
	events    eventList // built on first use (the deque sweep's)
	hasEvents bool
	runs      runIndex          // built on first use (the run sweep's)
	rw        runWork           // nodeRuns' scratch
	edges     int               // twice the pieces
	prices    []float64         // every distinct slot price, ascending
	rank      map[float64]int32 // price -> index in prices
	sc        scratch
	// stage1 finds the earliest start of one sweep and stage1Caps the node
	// capacities there; the run sweep by default, tests swap in the deque
	// sweep or the naive baseline.
	stage1     func(sweepSpec) (int64, bool)
	stage1Caps func() []nodeCap
	// obs, when set, is told what each placement reads and takes (the
	// incremental planner's cache; see observe.go).
	obs    *observer
	hooked bool
	// floor, when after NotBefore, is an instant before which the job
	// being placed has no feasible start (the incremental planner knows it
	// from an earlier job the job asks more than): sweeps begin there.
	floor int64
	// cut, when set, is the price cut per site of the searches of the job
	// being placed (free-first's free pass; see freefirst.go).
	cut []int32
	// backlog is the grid's queued work over its processors, in seconds,
	// for the split window (backlog.go; 0 without Options.SplitBacklog).
	backlog int64
	// the last price rankOf looked up
	lastPrice float64
	lastRank  int32
	lastOK    bool
}

// NewPool validates the options and forecasts and indexes all sites' slots
// once: slot time before opts.NotBefore is cut off, and every slot edge goes
// into one time-sorted list. Site names must be distinct. O(n log n) for n
// slots.
func NewPool(forecasts []forecast.Forecast, opts Options) (*Pool, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("coalloc options: %w", err)
	}
	p := &Pool{opts: opts, floor: math.MinInt64}
	p.stage1, p.stage1Caps = p.sweepRuns, p.capacitiesRuns
	if dequeSweep {
		p.stage1, p.stage1Caps = p.sweep, p.capacities
	}
	seen := map[string]int{}
	classIdx := map[string]int32{}
	for i := range forecasts {
		f := &forecasts[i]
		if err := ValidateForecast(f); err != nil {
			return nil, fmt.Errorf("forecast %d (site %q): %w", i, f.Site, err)
		}
		if j, dup := seen[f.Site]; dup {
			return nil, fmt.Errorf("forecast %d: %w: site %q duplicates forecast %d", i, forecast.ErrInvalid, f.Site, j)
		}
		seen[f.Site] = i
		p.addSite(f, classIdx)
	}
	if len(p.nodes) > math.MaxInt32 {
		return nil, fmt.Errorf("coalloc: %d nodes: too many", len(p.nodes))
	}
	p.renumber()
	p.indexPrices()
	return p, nil
}

func (p *Pool) addSite(f *forecast.Forecast, classIdx map[string]int32) {
	meta := *f
	meta.Slots = nil
	s := site{fc: meta}
	byName := make(map[string]int32, len(f.Nodes))
	for _, n := range f.Nodes {
		idx := int32(len(p.nodes))
		byName[n.Name] = idx
		s.nodes = append(s.nodes, idx)
		p.nodes = append(p.nodes, node{site: len(p.sites), name: n.Name, speed: n.Speed})
		c := p.classOf(n, classIdx)
		p.nodeClass = append(p.nodeClass, c)
		if !slices.Contains(s.classes, c) {
			s.classes = append(s.classes, c)
		}
		p.nodeSite = append(p.nodeSite, int32(len(p.sites)))
	}
	// Every node's pieces in one array, each node's part sized to its
	// slots (growing them one append at a time cost twice the memory on
	// large sites). Slots come grouped by node, so the name is looked up
	// once per run of slots, not once per slot.
	count := make([]int32, len(f.Nodes))
	idx := make([]int32, len(f.Slots))
	first := int32(len(p.nodes) - len(f.Nodes))
	last, lastName := int32(-1), ""
	for i, sl := range f.Slots {
		if last < 0 || sl.Node != lastName {
			last, lastName = byName[sl.Node]-first, sl.Node
		}
		idx[i] = last
		if sl.End > max(sl.Start, p.opts.NotBefore) {
			count[last]++
		}
	}
	s.free = f.FreePrice // 0: not stated (see indexPrices)
	all := make([]piece, 0, len(f.Slots))
	for k := range f.Nodes {
		c := int(count[k])
		p.nodes[first+int32(k)].pieces = all[len(all) : len(all) : len(all)+c]
		all = all[:len(all)+c]
	}
	for i, sl := range f.Slots {
		start := max(sl.Start, p.opts.NotBefore)
		if sl.End <= start {
			continue
		}
		n := &p.nodes[first+idx[i]]
		n.pieces = append(n.pieces, piece{start: start, end: sl.End, procs: int64(sl.Procs), price: sl.Price})
	}
	p.sites = append(p.sites, s)
}

// renumber orders the nodes by the start of their first piece (then
// forecast order). A sweep meets nodes roughly in that order, so it reads
// their state nearly in sequence instead of at random: on large pools that
// is most of its cost. p.ord keeps the forecast order, which the node
// choice's tie-breaks and the listing of parts use.
func (p *Pool) renumber() {
	n := len(p.nodes)
	first := make([]int64, n)
	perm := make([]int32, n) // new index -> old (forecast order)
	for i := range p.nodes {
		first[i] = math.MaxInt64
		for _, pc := range p.nodes[i].pieces {
			first[i] = min(first[i], pc.start)
		}
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(first[a], first[b]) })
	inv := make([]int32, n)
	nodes, classes, sites := make([]node, n), make([]int32, n), make([]int32, n)
	for nw, old := range perm {
		inv[old] = int32(nw)
		nodes[nw], classes[nw], sites[nw] = p.nodes[old], p.nodeClass[old], p.nodeSite[old]
	}
	p.nodes, p.nodeClass, p.nodeSite, p.ord = nodes, classes, sites, perm
	for s := range p.sites {
		for i, old := range p.sites[s].nodes {
			p.sites[s].nodes[i] = inv[old]
		}
	}
}

func (p *Pool) classOf(n forecast.Node, idx map[string]int32) int32 {
	var feats []string
	if len(n.Features) > 0 {
		feats = slices.Clone(n.Features)
		slices.Sort(feats)
		feats = slices.Compact(feats)
	}
	key := strconv.FormatFloat(n.Speed, 'g', -1, 64) + "/" + strconv.FormatInt(n.MemMB, 10) + "/" + strings.Join(feats, "\x00")
	if c, ok := idx[key]; ok {
		return c
	}
	c := int32(len(p.classes))
	p.classes = append(p.classes, class{speed: n.Speed, memMB: n.MemMB, features: feats})
	idx[key] = c
	return c
}

// indexPrices ranks every distinct slot price.
func (p *Pool) indexPrices() {
	p.rank = map[float64]int32{}
	for i := range p.nodes {
		last, seen := 0.0, false
		for _, pc := range p.nodes[i].pieces {
			if seen && pc.price == last {
				continue
			}
			last, seen = pc.price, true
			if _, ok := p.rank[pc.price]; !ok {
				p.rank[pc.price] = 0
				p.prices = append(p.prices, pc.price)
			}
		}
		p.edges += 2 * len(p.nodes[i].pieces)
	}
	slices.Sort(p.prices)
	for i, pr := range p.prices {
		p.rank[pr] = int32(i)
	}
	for i := range p.sites {
		if p.sites[i].free == 0 && len(p.prices) > 0 {
			p.sites[i].free = p.prices[0]
		}
	}
	p.lastOK = false
}

// ensureEvents builds the edge list on first use; placements keep it up
// to date from then on (addPieces).
func (p *Pool) ensureEvents() {
	if p.hasEvents {
		return
	}
	ev := make([]event, 0, p.edges)
	for i := range p.nodes {
		for _, pc := range p.nodes[i].pieces {
			ev = p.appendEdges(ev, int32(i), pc)
		}
	}
	sortByTime(ev) // appended in node order, so (time, node) order
	p.events, p.hasEvents = newEventList(ev), true
}

func (p *Pool) appendEdges(ev []event, n int32, pc piece) []event {
	cl, rk := p.nodeClass[n], p.rankOf(pc.price)
	return append(ev,
		event{at: pc.start, node: n, procs: int32(pc.procs), class: cl, rank: rk},
		event{at: pc.end, node: n, procs: int32(-pc.procs), class: cl, rank: rk})
}

// rankOf is the rank of a slot price, remembering the last one looked up
// (a node's pieces mostly share a price).
func (p *Pool) rankOf(price float64) int32 {
	if price != p.lastPrice || !p.lastOK {
		p.lastPrice, p.lastRank, p.lastOK = price, p.rank[price], true
	}
	return p.lastRank
}

// addPieces records pieces taken by a placement (negative procs, at prices
// the node has) and inserts their edges.
func (p *Pool) addPieces(n int32, pcs []piece) {
	if p.obs != nil {
		p.obs.took(p.sites[p.nodeSite[n]].fc.Site, p.nodes[n].name, pcs)
	}
	if p.runs.built {
		p.keepRuns(n)
	}
	for _, pc := range pcs {
		p.nodes[n].pieces = append(p.nodes[n].pieces, pc)
		p.edges += 2
		if p.hasEvents {
			for _, e := range p.appendEdges(nil, n, pc) {
				p.events.insert(e)
			}
		}
	}
	if p.runs.built {
		p.rerun(n)
	}
}

// maxRank is the rank of the dearest price at or below maxPrice (-1: none).
func (p *Pool) maxRank(maxPrice float64) int32 {
	i, found := slices.BinarySearch(p.prices, maxPrice)
	if found {
		return int32(i)
	}
	return int32(i) - 1
}

// Len is the number of piece edges the pool sweeps (twice the slots, plus
// two per piece that placements took).
func (p *Pool) Len() int { return p.edges }

// dequeSweep makes new pools use the deque sweep (sweep.go) instead of the
// run sweep: the baseline of the benchmarks and of the run sweep's tests.
var dequeSweep = false

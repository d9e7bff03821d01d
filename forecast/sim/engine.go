package sim

import (
	"fmt"
	"sort"
	"time"

	"lookahead/forecast"
)

type node struct {
	name   string
	procs  int
	mem    int64 // MB, for MINRESOURCE
	used   int
	usable bool
	holds  []nhold   // grid reservations and this pass's blocked-job reservations
	run    []runHold // running jobs on this node
}

// runHold is a running job's processors on one node.
type runHold struct {
	j     *job
	procs int
}

// nhold is processors of a node held over [s, e) by grid reservation r.
type nhold struct {
	s, e  int64
	procs int
	r     *resv
}

type resv struct {
	r     forecast.Reservation
	hosts []hostUse
	pool  int          // processors on usable nodes
	seq   int64        // creation order, see nevent
	sr    bool         // a standing reservation's window: standingNext steps onto its edges
	def   *StandingRes // its standing reservation, when sr
}

// Engine is an incremental simulation of one cluster under one Policy.
// Drive it with Submit, Reserve/Release and AdvanceTo; read it with
// Snapshot and Now. Not safe for concurrent use.
type Engine struct {
	site     string
	src      []forecast.SnapshotNode
	nodes    []node
	order    []int    // node preference: fewest processors first, then last listed first
	rank     []int    // rank[i]: node i's position in order
	freeBits []uint64 // by rank: usable nodes with processors not held by running jobs
	idle     []int    // per node: processors not held by running jobs (unusableIdle if unusable)
	byName   map[string]int
	total    int // processors on usable nodes
	maxChunk int // largest node
	policy   Policy
	// from policy, fixed: reservations a pass makes (< 0 all), whether
	// that is all of them, whether jobs backfill
	depth     int
	unbounded bool
	backfills bool
	now       int64
	origin    int64 // start, for Poll iterations
	// lastIter is the latest pass, prevIter the one before it (Maui's
	// priorities count waiting up to the previous iteration)
	lastIter, prevIter int64

	pending jobHeap // submitted for a future time, by Submit
	feed    []*job  // Run: every job, by arrival (bySubmit), fed to pending lazily
	fed     int     // feed[:fed] are in pending or gone
	queue   []*job  // waiting, in queue order
	running []*job  // by wallEnd
	ends    jobHeap // running, by actual end
	resvs   []*resv
	used    int // processors of usable nodes held by running jobs
	seq     int
	dirty   bool
	prof    profile
	sufMin  []int
	out     []Event

	// keepPlan: every job runs its full walltime (a forecast), so a
	// conservative plan stays true until something unplanned happens
	// (planValid) and is not rebuilt at every event.
	keepPlan   bool
	planValid  bool
	plan       jobHeap       // blocked jobs by planned start, while planValid
	stale      int           // started jobs still in queue
	blocked    []*blockedRes // blocked jobs' reservations this pass
	blockPool  []*blockedRes
	poolUsed   int      // blockPool entries in use this pass
	onProfile  bool     // the last reservation was charged on the profile too
	bfNodes    []bfNode // backfill: nodes with free processors
	candPos    []int    // backfill: node i's index in bfNodes
	bfJobs     []bfJob  // backfill: the jobs that may start
	bfTry      []bfJob  // backfill: the jobs tried in one window
	tsBuf      []int64
	tsBuf2     []int64 // inclusiveEvents
	freeBuf    []int
	evBuf      []nevent
	nodeEv     nodeEventCache // reserveRanges: the nodes' events of one search
	arBuf      []rng
	srBuf      []rng
	mergeBuf   []rng
	mergeTmp   []rng
	availBuf   []int
	resOrder   []int // nodes in the order reservations take them
	startOrder []int // … and jobs starting now (nil: LASTAVAILABLE, per job)
	laBuf      []int
	hostBuf    []hostUse   // pickFree, pickCand: the hosts being chosen
	chunkBuf   []chunkCand // pickChunks: the nodes it may take
	heldJobs   []*job      // setHeld: jobs marked held since clearHeld
	bfFrom     int         // backfillFrom: backfill looks from queue[bfFrom]
	untilBuf   []int64     // fitUntil
	qsum       queueSum    // laterFits: the waiting jobs' sizes
	bfStarted  []int       // backfill: where in its queue the jobs it started were
	rseq       int64       // reservations made so far (running jobs, grid, blocked)

	// quiet (RunWith): no Started and Ended events; onEnd gets every
	// finished job instead.
	quiet bool
	// noEnded (Build): no Ended events, which a forecast does not read
	noEnded bool
	onEnd   func(*job)

	resvChanged bool
	rdeltas     []step
	passes      int // full scheduling passes, for tests and tuning
	// noEarlyStop: the passes walk the queue as before their shortcuts
	// (an unbounded pass goes on while a later job asks for no more
	// processors than are free, no laterFits, no queue summary, backfill
	// walks the whole queue and lists every job it may try), for tests
	// and baseline benchmarks
	noEarlyStop bool

	fs    *fsRun     // Policy.Fairshare; nil: none (fairshare.go)
	lim   *Limits    // Policy.Limits; nil: none (limits.go)
	use   credUsage  // running jobs' usage, this pass
	level limitLevel // the limits backfill applies now
	bfWin *job       // MBFGetWindow's pseudo-job (windowBlocked)
	// secondCall: the priority pass runs again (limitRedo)
	secondCall bool
	order2     []*job // running jobs and the queue in priority order
	run2       []*job // rankRunningAndQueued: the running jobs by priority

	// standing reservations (standing_engine.go)
	srs     []srState
	zone    *time.Location
	srDay   int64 // the local day of the last refresh
	srSeq   int
	srNext  int64 // the next window edge, while > now
	lastAct int64 // the last arrival or start
	srACL   bool  // some standing reservation has an ACL (standing_acl.go)
	acl     *job  // the job node-level checks are made for, when srACL
	affBuf  []int // affinity: nodes of the windows admitting a job
	ordBuf  []int // resOrderFor
	bfAll   bool  // measuring backfill windows: admits is Maui's BFWindow probe's

	feats [][]string   // node features (nodefeat.go), nil: no node has any
	nlim  []NodeLimits // node policies, NODECFG MAXJOB … (nodelimits.go), nil: none
	slots []int        // a node's own NODECFG MAXPROC, its job slots (nodelimits.go), nil: none
	// jl are the nodes' job tables as Maui keeps them (jobtable.go), with
	// node policies only; jlEnded the jobs ended since the last pass
	jl      []jobTable
	jlEnded []*job
	jlBuf   []*job
	npRes   []npRes     // the first call's reservations with node policies (nodelimits.go)
	parts   *partitions // NODECFG PARTITION (partition.go), nil: one partition
	// redoNow: the second call of the priority pass after node policies
	// left reservations starting now (nodePolicyRedo)
	redoNow bool
}

// NewEngine returns an engine for cluster c at time start with nothing
// running or queued.
func NewEngine(c Cluster, p Policy, start int64) *Engine {
	e := &Engine{
		site:     c.Site,
		src:      append([]forecast.SnapshotNode(nil), c.Nodes...),
		byName:   make(map[string]int, len(c.Nodes)),
		policy:   p,
		now:      start,
		origin:   start,
		lastIter: start,
		pending:  jobHeap{less: bySubmit},
		ends:     jobHeap{less: byEnd},
		plan:     jobHeap{less: byPlanned},
	}
	e.depth, e.unbounded, e.backfills = p.depth(), p.unbounded(), p.backfills()
	e.lim = p.Limits
	if p.Fairshare != nil {
		e.fsInit(start)
	}
	e.nodes = make([]node, len(c.Nodes))
	for i, n := range c.Nodes {
		e.nodes[i] = node{name: n.Name, procs: n.Procs, mem: n.MemMB, usable: n.Usable()}
		e.byName[n.Name] = i
		if e.nodes[i].usable {
			e.total += n.Procs
			e.maxChunk = max(e.maxChunk, n.Procs)
		}
	}
	e.order = minResourceOrder(e.nodes)
	e.rank = make([]int, len(e.nodes))
	for k, i := range e.order {
		e.rank[i] = k
	}
	e.candPos = make([]int, len(e.nodes))
	e.availBuf = make([]int, len(e.nodes))
	e.allocOrders()
	e.idle = make([]int, len(e.nodes))
	e.freeBits = make([]uint64, (len(e.nodes)+63)/64)
	for i := range e.nodes {
		e.trackFree(i)
	}
	if p.Standing != nil {
		e.initStanding()
	}
	e.initFeatures(c, p)
	return e
}

// unusableIdle is e.idle of an unusable node: so far below zero that no
// amount of processors coming free makes it positive.
const unusableIdle = -1 << 40

// trackFree keeps e.idle[i] (processors not held by running jobs; see
// unusableIdle) and node i's bit in e.freeBits (indexed by its rank in the
// preference order) set exactly while it is usable and has processors not
// held by running jobs.
func (e *Engine) trackFree(i int) {
	n := &e.nodes[i]
	r := e.rank[i]
	if n.usable {
		e.idle[i] = n.procs - n.used
	} else {
		e.idle[i] = unusableIdle
	}
	if n.usable && n.used < n.procs {
		e.freeBits[r>>6] |= 1 << (r & 63)
	} else {
		e.freeBits[r>>6] &^= 1 << (r & 63)
	}
}

// Now is the engine's current time.
func (e *Engine) Now() int64 { return e.now }

// Capacity is the number of processors on usable nodes.
func (e *Engine) Capacity() int { return e.total }

// Submit queues j at j.Submit; a job submitted before Now arrives now but
// keeps its Submit for the queue order (a snapshot's queued jobs). A job that
// can never run here (invalid request, wider than the usable cluster, a
// ppn chunk larger than any node) is rejected: AdvanceTo reports it as a
// Rejected event.
func (e *Engine) Submit(j Job) {
	if jb := new(job); e.admit(j, jb) {
		e.pending.push(jb)
	}
}

// admit makes *into j's record, numbered in submission order, or adds a
// Rejected event and returns false.
func (e *Engine) admit(j Job, into *job) bool {
	arrive := max(j.Submit, e.now)
	if reason := e.refuse(j); reason != "" {
		e.out = append(e.out, Event{Kind: Rejected, Time: arrive, Job: j.ID, Reason: reason})
		return false
	}
	if e.policy.QOS != nil {
		j.QOS = e.policy.QOS.Of(j)
	}
	var elig []bool
	if len(j.Features) > 0 {
		var procs int
		if elig, procs = e.eligible(j.Features); procs < j.Procs {
			e.out = append(e.out, Event{Kind: Rejected, Time: arrive, Job: j.ID, Reason: featureReason(j, procs)})
			return false
		}
	}
	e.seq++
	into.init(j, e.seq)
	into.arrive = arrive
	if elig != nil {
		into.elig = &nodeSet{ok: elig}
	}
	return true
}

// firstPending is the next job to arrive, nil when none: the top of
// pending once the feed's next job, when it comes first, is pushed there
// (Run's 77k-job traces would otherwise make every pop walk a deep heap).
func (e *Engine) firstPending() *job {
	for e.fed < len(e.feed) && (e.pending.len() == 0 || bySubmit(e.feed[e.fed], e.pending.peek())) {
		e.pending.push(e.feed[e.fed])
		e.fed++
	}
	if e.pending.len() == 0 {
		return nil
	}
	return e.pending.peek()
}

func (e *Engine) refuse(j Job) string {
	switch {
	case j.Procs <= 0:
		return fmt.Sprintf("asks for %d processors", j.Procs)
	case j.Walltime <= 0:
		return fmt.Sprintf("walltime %d s is not positive", j.Walltime)
	case j.Procs > e.total:
		return fmt.Sprintf("asks for %d processors, the cluster has %d usable", j.Procs, e.total)
	case j.PPN < 0 || (j.PPN > 0 && j.Procs%j.PPN != 0):
		return fmt.Sprintf("%d processors are not whole chunks of ppn=%d", j.Procs, j.PPN)
	case j.PPN > e.maxChunk:
		return fmt.Sprintf("ppn=%d is larger than any node (%d)", j.PPN, e.maxChunk)
	case j.PPN > 0 && e.chunks(j.PPN) < j.Procs/j.PPN:
		return fmt.Sprintf("needs %d nodes with %d processors, the cluster has %d", j.Procs/j.PPN, j.PPN, e.chunks(j.PPN))
	}
	return ""
}

func (e *Engine) chunks(ppn int) int {
	c := 0
	for _, n := range e.nodes {
		if n.usable {
			c += n.procs / ppn
		}
	}
	return c
}

// AdvanceTo processes every submission, completion and reservation end up
// to and including t, running a scheduling pass at each instant where
// something changed, and moves Now to t (never backwards). It returns the
// events since the previous call, in time order.
func (e *Engine) AdvanceTo(t int64) []Event {
	if t < e.now {
		t = e.now
	}
	for {
		if e.dirty {
			e.schedule()
			e.dirty = false
		}
		next, ok := e.next()
		if !ok || next > t {
			break
		}
		e.now = max(e.now, next)
		e.apply()
	}
	e.now = t
	return e.flush()
}

// Drain runs until nothing is left to happen (the queue may still hold
// jobs that can never start) and returns the events; Now ends at the last
// event.
func (e *Engine) Drain() []Event {
	for {
		if e.dirty {
			e.schedule()
			e.dirty = false
		}
		next, ok := e.next()
		if !ok {
			return e.flush()
		}
		e.now = max(e.now, next)
		e.apply()
	}
}

func (e *Engine) flush() []Event {
	out := e.out
	e.out = nil
	return out
}

// next is the time of the next event.
func (e *Engine) next() (int64, bool) {
	t, ok := int64(never), false
	if e.ends.len() > 0 {
		t, ok = e.ends.peek().end, true
	}
	if p := e.firstPending(); p != nil && p.arrive < t {
		t, ok = p.arrive, true
	}
	for _, r := range e.resvs {
		if r.r.End < t && !r.sr {
			t, ok = r.r.End, true
		}
	}
	if e.planValid && e.plan.len() > 0 && e.plan.peek().planned < t {
		t, ok = max(e.plan.peek().planned, e.now), true
	}
	if len(e.srs) > 0 {
		t, ok = e.standingNext(t, ok)
	}
	if e.fs != nil && (ok || len(e.fs.capped) > 0) {
		// (a job over a fairshare cap waits for its usage to decay)
		t, ok = min(t, e.fsNextEdge(e.now)), true
	}
	if ok && e.policy.Poll > 0 {
		t = e.iteration(t)
	}
	return t, ok
}

// iteration is the first scheduler iteration at or after t when the
// policy polls.
func (e *Engine) iteration(t int64) int64 {
	k := max((t-e.origin+e.policy.Poll-1)/e.policy.Poll, 1)
	return e.origin + k*e.policy.Poll
}

// apply applies everything due at or before now: completions, reservation
// ends, submissions.
func (e *Engine) apply() {
	for e.ends.len() > 0 && e.ends.peek().end <= e.now {
		j := e.ends.pop()
		if j.end < j.wallEnd {
			e.planValid = false
		}
		e.finish(j)
	}
	if e.fs != nil {
		e.fsIterate()
	}
	for i := 0; i < len(e.resvs); {
		if e.resvs[i].r.End <= e.now {
			e.drop(i)
			continue
		}
		i++
	}
	for p := e.firstPending(); p != nil && p.arrive <= e.now; p = e.firstPending() {
		e.enqueue(e.pending.pop())
		e.planValid = false
	}
	e.dirty = true
}

func (e *Engine) enqueue(j *job) {
	e.lastAct = e.now
	if !e.unbounded {
		e.qsum.add(j) // (laterFits asks it in bounded passes only)
	}
	i := sort.Search(len(e.queue), func(k int) bool { return before(j, e.queue[k]) })
	e.queue = append(e.queue, nil)
	copy(e.queue[i+1:], e.queue[i:])
	e.queue[i] = j
}

func (e *Engine) finish(j *job) {
	for _, h := range j.hosts {
		n := &e.nodes[h.node]
		n.used -= h.procs
		for k, o := range n.run {
			if o.j == j {
				n.run[k] = n.run[len(n.run)-1]
				n.run = n.run[:len(n.run)-1]
				break
			}
		}
		e.trackFree(h.node)
	}
	e.used -= j.pool
	if e.fs != nil {
		e.fs.onEnd(j)
	}
	if e.jl != nil {
		e.jlEnded = append(e.jlEnded, j)
	}
	i := sort.Search(len(e.running), func(k int) bool { return e.running[k].wallEnd >= j.wallEnd })
	for ; i < len(e.running); i++ {
		if e.running[i] == j {
			e.running = append(e.running[:i], e.running[i+1:]...)
			break
		}
	}
	if e.onEnd != nil {
		e.onEnd(j)
	}
	if !e.quiet && !e.noEnded {
		e.out = append(e.out, Event{Kind: Ended, Time: j.end, Job: j.ID, Start: j.start, End: j.end, Hosts: e.hostList(j.hosts)})
	}
}

func (e *Engine) hostList(hs []hostUse) []forecast.HostProcs {
	out := make([]forecast.HostProcs, len(hs))
	for i, h := range hs {
		out[i] = forecast.HostProcs{Node: e.nodes[h.node].name, Procs: h.procs}
	}
	return out
}

// run marks j running on hosts from start, holding them until end.
func (e *Engine) run(j *job, start, end int64, hosts []hostUse) {
	j.start, j.end, j.wallEnd, j.hosts = start, end, sat(start, j.Walltime), hosts
	e.rseq++
	j.rseq = e.rseq
	j.pool = 0
	for _, h := range hosts {
		e.nodes[h.node].used += h.procs
		e.nodes[h.node].run = append(e.nodes[h.node].run, runHold{j, h.procs})
		if e.nodes[h.node].usable {
			j.pool += h.procs
		}
		e.trackFree(h.node)
	}
	e.used += j.pool
	if e.fs != nil {
		e.fs.onRun(j)
	}
	if e.jl != nil {
		e.jlAdd(j)
	}
	i := sort.Search(len(e.running), func(k int) bool { return e.running[k].wallEnd > j.wallEnd })
	e.running = append(e.running, nil)
	copy(e.running[i+1:], e.running[i:])
	e.running[i] = j
	e.ends.push(j)
}

func (e *Engine) start(j *job, hosts []hostUse) {
	d := j.Walltime
	if j.Runtime >= 0 && j.Runtime < d {
		d = j.Runtime
	}
	j.started = true
	e.lastAct = e.now
	if e.lim != nil {
		e.use.add(e.lim, j, j.Walltime)
	}
	e.run(j, e.now, e.now+d, hosts)
	if !e.quiet {
		e.out = append(e.out, Event{Kind: Started, Time: e.now, Job: j.ID, Start: e.now, End: j.end, Hosts: e.hostList(hosts)})
	}
}

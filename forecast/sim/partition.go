package sim

import "slices"

// Partitions (NODECFG[name] PARTITION=), as Maui 3.3.1 schedules them
// (github.com/marc0f/maui da3b035; docs/simulator.md, "Partitions"):
//
//   - MSchedProcessJobs calls m_schedule_on_partitions twice: first each
//     partition with nodes, in index order, with only the jobs whose
//     default partition it is (MJobFindDefPart: PDEF, else the system's,
//     which MParSetDefaults makes DEFAULT) and no backfill; then every
//     partition again with every job that may use it, each followed by
//     MQueueBackFill on it. Partition ALL (index 0) only takes spanning
//     jobs, which a workload without them never has.
//   - Each MQueueScheduleIJobs call has its own depth count and
//     IdleJobFound; a job that holds a reservation in another partition,
//     or one starting later, counts against the depth and is skipped.
//   - A job starts only on the pass's partition's nodes (MJobSelectMNL),
//     and only where it asks for no more processors than the partition
//     has (MQueueCheckSingleJob, P->CRes.Procs).
//   - A reservation goes to the partition where the job starts first
//     (MJobReserve → MJobGetEStartTime with no partition: every partition
//     in index order, the earliest start, the first among equals).
//
// DEFAULT is index 0 here (Maui's 1), then the partitions in the order
// maui.cfg first names them (MParAdd's free slots).

// partitions is the engine's view of the site's partitions.
type partitions struct {
	names []string // DEFAULT, then the named ones
	of    []int    // node → partition
	procs []int    // each partition's processors (its usable nodes)
	nodes []int    // each partition's node count (Maui's ConfigNodes)
	mask  []*nodeSet
	// per job: its own (feature) node set and the partition masks made
	// from it
	own  map[*job]*nodeSet
	made map[*job][]*nodeSet
	res  map[*job]partRes // the reservation each job holds this pass
	// own0: the nodes of a reservation starting now that releaseNow set
	// aside, which the job takes first when it starts (the affinity
	// MJobAllocMNL gives a job's own reservation)
	own0 map[*job][]int
	buf  []*job
	was  []bool
	cur  int // the partition being backfilled, -1: none
}

// partRes is a job's reservation in this pass: its partition, its holds
// and whether the processor profile holds it too.
type partRes struct {
	p      int
	b      *blockedRes
	onProf bool
}

// initPartitions sets e.parts from NODECFG PARTITION= (nil when no node
// is outside DEFAULT).
func (e *Engine) initPartitions(p Policy) {
	if p.Nodes == nil || len(p.Nodes.Partition) == 0 {
		return
	}
	pt := &partitions{names: []string{"DEFAULT"}, of: make([]int, len(e.nodes)), cur: -1,
		own: map[*job]*nodeSet{}, made: map[*job][]*nodeSet{}, res: map[*job]partRes{}, own0: map[*job][]int{}}
	for _, name := range p.Nodes.PartOrder {
		if name != "DEFAULT" && !slices.Contains(pt.names, name) {
			pt.names = append(pt.names, name)
		}
	}
	pt.procs = make([]int, len(pt.names))
	pt.nodes = make([]int, len(pt.names))
	pt.mask = make([]*nodeSet, len(pt.names))
	for k := range pt.names {
		pt.mask[k] = &nodeSet{ok: make([]bool, len(e.nodes))}
	}
	for i, n := range e.nodes {
		k := slices.Index(pt.names, p.Nodes.Partition[n.name])
		k = max(k, 0)
		pt.of[i] = k
		pt.mask[k].ok[i] = true
		pt.nodes[k]++
		if n.usable {
			pt.procs[k] += n.procs
		}
	}
	if len(pt.names) > 1 {
		e.parts = pt
		e.noEarlyStop = true // a later partition's pass counts this one's reservations
	}
}

// maskFor is j's node set inside partition k (its features too).
func (pt *partitions) maskFor(j *job, k int) *nodeSet {
	own, seen := pt.own[j]
	if !seen {
		own = j.elig
		pt.own[j] = own
	}
	if own == nil {
		return pt.mask[k]
	}
	m := pt.made[j]
	if m == nil {
		m = make([]*nodeSet, len(pt.names))
		pt.made[j] = m
	}
	if m[k] == nil {
		ok := make([]bool, len(own.ok))
		for i := range ok {
			ok[i] = own.ok[i] && pt.mask[k].ok[i]
		}
		m[k] = &nodeSet{ok: ok}
	}
	return m[k]
}

// allows reports whether partition k may take j: it has nodes and as
// many processors as j asks for.
func (pt *partitions) allows(j *job, k int) bool {
	return pt.nodes[k] > 0 && j.Procs <= pt.procs[k]
}

// restore gives every job its own node set back.
func (pt *partitions) restore() {
	for j, own := range pt.own {
		j.elig = own
	}
	clear(pt.own)
	clear(pt.res)
	clear(pt.own0)
}

// forget drops a job that left the queue.
func (pt *partitions) forget(j *job) {
	delete(pt.made, j)
}

// partitionSchedule is schedule's work after the profile is built when
// the site has partitions: m_schedule_on_partitions twice.
func (e *Engine) partitionSchedule(keep bool) {
	pt := e.parts
	all := e.queue
	defer pt.restore()
	// first call: each job's default partition (DEFAULT: PDEF is not
	// followed), no backfill
	e.partPass(all, 0, keep, false)
	e.secondCall = true
	for k := range pt.names {
		e.releaseNow(k)
		e.partPass(all, k, keep, false)
	}
	e.secondCall = false
	// backfill: the hard round's MQueueBackFill per partition, after both
	// calls (in 3.3.1 the second call's soft backfill does not run: the
	// Maui log shows only MQueueBackFill(BFQueue,HARD,<partition>))
	if e.backfills {
		for k := range pt.names {
			e.partPass(all, k, keep, true)
		}
	}
	e.queue = all
	w := e.dropStarted(len(all))
	for _, j := range all[w:] {
		pt.forget(j)
	}
	w = e.hardRound(w)
	clear(e.queue[w:])
	e.queue = e.queue[:w]
	if e.lim != nil {
		e.noteReservations()
	}
	e.dropBlockedHolds()
}

// partPass is one MQueueScheduleIJobs call on partition k, or with bf its
// MQueueBackFill: the waiting jobs it selects, each limited to k's nodes.
func (e *Engine) partPass(all []*job, k int, keep, bf bool) {
	pt := e.parts
	if pt.nodes[k] == 0 {
		return
	}
	sub, was := pt.buf[:0], pt.was[:0]
	for _, j := range all {
		if j.started || !pt.allows(j, k) {
			continue
		}
		j.elig = pt.maskFor(j, k)
		sub = append(sub, j)
		was = append(was, j.held)
	}
	pt.buf, pt.was = sub, was
	if len(sub) == 0 {
		return
	}
	if bf {
		pt.cur = k
		e.backfill(sub)
		pt.cur = -1
		return
	}
	q := slices.Clone(sub)
	e.queue = q
	e.priorityPass(false, keep, nil)
	// priorityPass forgets the holds of jobs it did not reach; their
	// reservations stand
	for n, j := range sub {
		if was[n] && !j.started {
			if _, ok := pt.res[j]; ok {
				j.held = true
			}
		}
	}
}

// releaseNow frees, before partition k's pass of the second call, the
// reservations starting now that jobs got there in an earlier pass: the
// job is tried again and may start on them (MQueueScheduleIJobs skips
// only reservations elsewhere or later).
func (e *Engine) releaseNow(k int) {
	pt := e.parts
	for j, r := range pt.res {
		if r.p != k || j.started || !j.held || j.planned > e.now {
			continue
		}
		pt.own0[j] = slices.Clone(r.b.per)
		r.b.clear()
		if r.onProf {
			e.prof.add(j.planned, sat(j.planned, j.Walltime), j.Procs)
		}
		j.held = false
		delete(pt.res, j)
	}
}

// reserveJob is reserveBlocked, with partitions in the partition where j
// starts first (MJobReserve → MJobGetEStartTime).
func (e *Engine) reserveJob(j *job) int64 {
	pt := e.parts
	if pt == nil || e.keepPlan || e.unbounded {
		return e.reserveBlocked(j)
	}
	cur := j.elig
	best, bestT := -1, int64(never)
	for k := range pt.names {
		if !pt.allows(j, k) {
			continue
		}
		j.elig = pt.maskFor(j, k)
		t := e.reserveBlocked(j)
		if t == never {
			continue
		}
		e.dropLastBlocked()
		if e.onProfile {
			e.prof.add(t, sat(t, j.Walltime), j.Procs)
		}
		if t < bestT {
			best, bestT = k, t
		}
	}
	if best < 0 {
		j.elig = cur
		return never
	}
	j.elig = pt.maskFor(j, best)
	t := e.reserveBlocked(j)
	if t != never {
		pt.res[j] = partRes{p: best, b: e.blocked[len(e.blocked)-1], onProf: e.onProfile}
	}
	return t
}

// nodePartition reads NODECFG[name] PARTITION=.
func (c *cfgReader) nodePartition(name, val string) {
	nc := c.nodeCfg()
	if nc.Partition == nil {
		nc.Partition = map[string]string{}
	}
	nc.Partition[name] = val
	if !slices.Contains(nc.PartOrder, val) {
		nc.PartOrder = append(nc.PartOrder, val)
	}
}

// partitionNote lists what of partitions is not followed.
func (c *cfgReader) partitionNote() {
	if c.pol.Nodes == nil || len(c.pol.Nodes.Partition) == 0 {
		return
	}
	c.note("NODECFG PARTITION: partitions are followed in part: jobs stay inside one partition and Maui's passes per partition are followed, but PLIST/PDEF partition access, spanning jobs and per-partition parameters are not, the conservative plan (unbounded depth, a forecast's kept plan) reserves on the processor profile across partitions, and schedules can differ from Maui's (docs/simulator.md, Partitions)")
}

// inPart reports whether node i may open a backfill window now: with
// partitions, MBFGetWindow looks at the backfilled partition's nodes only.
func (e *Engine) inPart(i int) bool {
	return e.parts == nil || e.parts.cur < 0 || e.parts.of[i] == e.parts.cur
}

// ownRes is the nodes of j's own reservation set aside this pass (nil:
// none, or no partitions): a job starting on its reservation takes them
// first.
func (e *Engine) ownRes(j *job) []int {
	if e.parts == nil {
		return nil
	}
	return e.parts.own0[j]
}

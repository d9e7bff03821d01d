package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Node policies: NODECFG[name] MAXJOB=, MAXPROC= and MAXPROCPERUSER=, each
// falling back to NODECFG[DEFAULT]'s when the node's own is not set (or 0).
// Maui 3.3.1 applies them in two places:
//
//   - MNodeCheckPolicies (MNode.c), for a job starting now only
//     (MJobSelectMNL → MJobGetINL; MReqGetFNL passes MAX_MTIME, past the
//     check's one-hour horizon). With the jobs and tasks running on the
//     node (of everyone, and of the job's user; one task is one processor
//     here, Maui's DRes.Procs = 1): MAXJOB refuses the node when jobs + 1
//     > MAXJOB; MAXPROCPERUSER and MAXPROC refuse it when tasks + 1 > the
//     limit, else the node gives at most limit − tasks.
//   - MJobGetSNRange (MJob.c), the node's availability ranges behind every
//     reservation, the backfill windows and the check of a job starting
//     now (MNodeSelectIdleTasks → MJobCheckNStartTime): it counts the
//     *job* reservations in force on the node (running jobs until their
//     walltime, blocked jobs' reservations; not grid or standing ones),
//     and while that count is >= MAXJOB the node is blocked ("policy")
//     exactly as if it ran out of processors: a range closes there and
//     none opens. So a job starting now also needs the node to stay under
//     MAXJOB over its whole walltime, reservations of later jobs included.
//
// MAXJOBPERUSER is checked in both places with different comparisons and
// needs each reservation's user in the range walk: not modelled (listed).

// NodeLimits are one node's policies (0: not set).
type NodeLimits struct {
	MaxJob, MaxProc, MaxProcPerUser int
}

func (l NodeLimits) set() bool { return l != NodeLimits{} }

// orDefault fills each limit l does not set from d (MNodeCheckPolicies:
// "if (N->… <= 0) use MSched.DefaultN's").
func (l NodeLimits) orDefault(d NodeLimits) NodeLimits {
	pick := func(a, b int) int {
		if a <= 0 {
			return b
		}
		return a
	}
	return NodeLimits{pick(l.MaxJob, d.MaxJob), pick(l.MaxProc, d.MaxProc), pick(l.MaxProcPerUser, d.MaxProcPerUser)}
}

// nodeLimitAttr reads one NODECFG attribute into l; false when key is not
// a node policy. Maui reads the value with strtol(…, 0): a leading 0 is
// octal, 0x hex.
func nodeLimitAttr(l *NodeLimits, name, key, val string) (bool, error) {
	var dst *int
	switch key {
	case "MAXJOB":
		dst = &l.MaxJob
	case "MAXPROC":
		dst = &l.MaxProc
	case "MAXPROCPERUSER":
		dst = &l.MaxProcPerUser
	default:
		return false, nil
	}
	n, err := strconv.ParseInt(val, 0, 32)
	if err != nil {
		return true, fmt.Errorf("NODECFG[%s] %s=%q: not an integer", name, key, val)
	}
	*dst = int(n)
	return true, nil
}

// initNodeLimits sets e.nlim, each node's policies with the DEFAULT ones
// filled in (nil when no node has any), and e.slots, the nodes' own
// MAXPROC (nil when no node has one).
func (e *Engine) initNodeLimits(p Policy) {
	if p.Nodes == nil || (len(p.Nodes.Limits) == 0 && !p.Nodes.DefaultLimits.set()) {
		return
	}
	e.nlim = make([]NodeLimits, len(e.nodes))
	e.jl = make([]jobTable, len(e.nodes))
	for i, n := range e.nodes {
		own := p.Nodes.Limits[n.name]
		e.nlim[i] = own.orDefault(p.Nodes.DefaultLimits)
		if own.MaxProc > 0 {
			if e.slots == nil {
				e.slots = make([]int, len(e.nodes))
			}
			e.slots[i] = own.MaxProc
		}
	}
}

// Job slots: what a node's own NODECFG MAXPROC does besides
// MNodeCheckPolicies. Maui 3.3.1 caps the node's available class slots
// with it (MNodeResetJobSlots, MRM.c, at every iteration: N->ARes.PSlot =
// min(configured, the node's own MAXPROC; NODECFG[DEFAULT]'s is not
// read there), less the tasks running on the node (MNodeAddJob), and
// MNodeGetTC counts a node's tasks now from N->ARes, slots included.
// Three places read N->ARes rather than walking the node's reservations
// from its configured resources:
//
//   - MJobGetSNRange on a node with no reservation at all from the query's
//     start (no running job, no grid, standing or blocked job's
//     reservation): its one range, from now for ever, has the tasks
//     N->ARes gives now ("node n045 supports 4 tasks of job … for
//     INFINITY … (no reservation)" for an idle 8-processor node with
//     MAXPROC=4). Every reservation's ranges, the backfill probe and the
//     check of a job starting now go through it. A node with reservations
//     is walked from its configured processors: no cap.
//   - MJobCheckNRes at now, for a job starting now (MNodeSelectIdleTasks):
//     a node with no slot left is refused (nodeAllows), though
//     MNodeCheckPolicies, counting the job table's entries (jobtable.go),
//     may let the job take more than the slots left.
//   - MJobGetNRange's first count, the most tasks it asks the walk about
//     for a job starting now: the walk's answer decides (not followed: no
//     change found).
//
// Only a job that asks for class slots is counted against them: the
// backfill window's pseudo-job (MBFGetWindow) copies only the first
// sizeof(pointer) bytes of its resources (memcpy(&RQ->DRes, DRes,
// sizeof(DRes))), so it asks for no slot and the backfill windows see no
// MAXPROC (tried: leaving a node at its MAXPROC out of them took
// nodemaxheld from 187 to 165 exact starts). MJobAllocMNL books a
// reservation's tasks from the ranges; the job then starts through
// MNodeCheckPolicies (nodeAllows).

// slotsLeft is node i's job slots left now (its own MAXPROC less the tasks
// running on it), or -1 when its MAXPROC is not its own.
func (e *Engine) slotsLeft(i int) int {
	if e.slots == nil || e.slots[i] <= 0 {
		return -1
	}
	return max(e.slots[i]-e.nodes[i].used, 0)
}

// quietFrom reports whether node i has no reservation in force at or after
// t: MJobGetSNRange's case "no relevant reservations", where a node is
// counted from N->ARes.
func (e *Engine) quietFrom(i int, t int64) bool {
	n := &e.nodes[i]
	if len(n.run) > 0 {
		return false
	}
	for _, h := range n.holds {
		if h.e > t {
			return false
		}
	}
	for _, b := range e.blocked {
		if b.per[i] > 0 && b.e > t {
			return false
		}
	}
	return true
}

// slotsFit is holdAt's look at the job slots (the first reservation of a
// pass, nothing reserved yet, so a node is quiet when nothing runs on
// it): Maui's ranges from now count a quiet node's slots for ever, so j
// fits at t only if the nodes make up its tasks that way; booked at t >
// now, a quiet node gives what it has then (MJobGetSNRange asked from t
// counts its configured processors), at now its slots. free is what each
// node has at t, capped here where the booking is capped.
func (e *Engine) slotsFit(j *job, free []int, t int64) bool {
	got := 0
	for i, f := range free {
		if f <= 0 || !j.can(i) {
			continue
		}
		if len(e.nodes[i].run) == 0 {
			f = e.idleTasks(i, f)
			if t <= e.now {
				free[i] = f
			}
		}
		switch {
		case !e.chunksByMaui(j):
			got += e.chunkCap(j, f)
		case f >= j.PPN:
			got += f // distributeChunks counts a node's tasks before rounding
		}
	}
	return got >= j.Procs
}

// idleTasks caps tc, what quiet node i offers now, by its job slots.
func (e *Engine) idleTasks(i, tc int) int {
	if left := e.slotsLeft(i); left >= 0 {
		return min(tc, left)
	}
	return tc
}

// nodeAllows is what node i may give j starting now with its walltime
// ending at end: what it keeps free until then, less what its policies
// refuse (0: the node is refused).
func (e *Engine) nodeAllows(j *job, i int, end int64) int {
	return e.nodeAllowsFrom(j, i, end, e.nodeFree(i, end))
}

// nodeAllowsFrom is nodeAllows where the node's range gives f.
func (e *Engine) nodeAllowsFrom(j *job, i int, end int64, f int) int {
	if e.nlim == nil || f <= 0 {
		return f
	}
	l := e.nlim[i]
	if !l.set() {
		return f
	}
	if e.jobFullIn(i, e.now, end) {
		return 0 // MNodeCheckPolicies, and MJobGetSNRange's policy block
	}
	if left := e.slotsLeft(i); left >= 0 && left < max(1, j.PPN) {
		return 0 // MJobCheckNRes: no job slot left on N->ARes
	}
	tasks, utasks := e.jlCount(j, i) // MNodeCheckPolicies walks N->JList (jobtable.go)
	if l.MaxProcPerUser > 0 {
		f = min(f, l.MaxProcPerUser-utasks)
	}
	if l.MaxProc > 0 {
		f = min(f, l.MaxProc-tasks)
	}
	return max(f, 0)
}

// jobsAt is the number of job reservations on node i in force at t >= now:
// running jobs (until their walltime) and blocked jobs' reservations.
func (e *Engine) jobsAt(i int, t int64) int {
	c := 0
	for _, r := range e.nodes[i].run {
		if max(r.j.wallEnd, r.j.end) > t {
			c++
		}
	}
	for _, b := range e.blocked {
		if b.per[i] > 0 && b.s <= t && b.e > t {
			c++
		}
	}
	return c
}

// jobFullIn reports whether node i reaches its MAXJOB at some instant of
// [s, end) (MJobGetSNRange's PBlock). Running jobs only end, so the count
// can only rise where a blocked job's reservation starts.
func (e *Engine) jobFullIn(i int, s, end int64) bool {
	if e.nlim == nil || e.nlim[i].MaxJob <= 0 {
		return false
	}
	m := e.nlim[i].MaxJob
	if e.jobsAt(i, s) >= m {
		return true
	}
	for _, b := range e.blocked {
		if b.per[i] > 0 && b.s > s && b.s < end && e.jobsAt(i, b.s) >= m {
			return true
		}
	}
	return false
}

// jobFullFrom is the first instant from now at which node i is at its
// MAXJOB (never if none): a backfill window's range ends there, and a
// node full now has none (0).
func (e *Engine) jobFullFrom(i int) int64 {
	if e.nlim == nil || e.nlim[i].MaxJob <= 0 {
		return never
	}
	if e.jobsAt(i, e.now) >= e.nlim[i].MaxJob {
		return 0
	}
	t := int64(never)
	for _, b := range e.blocked {
		if b.per[i] > 0 && b.s > e.now && b.s < t && e.jobsAt(i, b.s) >= e.nlim[i].MaxJob {
			t = b.s
		}
	}
	return t
}

// maskJobFull zeroes free[i] for every node at its MAXJOB at some instant
// of [t, end) (a reservation's nodes, holdAt).
func (e *Engine) maskJobFull(free []int, t, end int64) {
	if e.nlim == nil {
		return
	}
	for i := range free {
		if free[i] > 0 && e.jobFullIn(i, t, end) {
			free[i] = 0
		}
	}
}

// nodeCfgDefault reads NODECFG[DEFAULT]: its policies are every node's
// fallback (MSched.DefaultN); its other settings are not modelled.
func (c *cfgReader) nodeCfgDefault(name string, attrs []string) error {
	for _, a := range attrs {
		key, val, _ := strings.Cut(a, "=")
		lim := c.nodeCfg().DefaultLimits
		ok, err := nodeLimitAttr(&lim, name, strings.ToUpper(key), val)
		if err != nil {
			return err
		}
		if !ok {
			c.note("NODECFG[%s] %s: settings for every node are not modelled", name, a)
			continue
		}
		c.nodeCfg().DefaultLimits = lim
	}
	return nil
}

// countJob follows the job reservations in force in MJobGetSNRange's walk
// (JC: ++ where one starts, -- where one ends).
func (w *rangeWalk) countJob(v *nevent) {
	if v.start {
		w.jc++
	} else {
		w.jc--
	}
}

// policyBlock is MJobGetSNRange's PBlock: the node is at its MAXJOB.
func (w *rangeWalk) policyBlock() bool { return w.q.mjc > 0 && w.jc >= w.q.mjc }

// nodePolicyRedo is Maui's second call of the priority pass
// (MSchedProcessJobs → m_schedule_on_partitions, once without backfill,
// then again with it) where it matters with node policies: a job they
// keep from starting now gets a reservation starting now (MJobReserve
// ignores MNodeCheckPolicies). In the second call MQueueScheduleIJobs
// skips, and counts against the depth, only reservations starting later;
// a job whose reservation starts now is tried again, fails again, and
// MJobPReserve refuses it ("existing reservation"), which is
// IdleJobFound, uncounted. So the jobs after it get reservations up to the
// depth again, counting only the later ones: Maui ends such a pass with
// more reservations than RESERVATIONDEPTH (nodemaxheld at +20736 s: six
// with depth 4), and they hold nodes against backfill. Not with usage
// limits (limitRedo), HIGHEST or unbounded depth.
func (e *Engine) nodePolicyRedo(w int, idle, full, keep bool) (int, bool) {
	if full || keep || e.unbounded {
		return w, idle
	}
	now := false
	for _, j := range e.queue[:w] {
		if j.held && j.planned <= e.now {
			now = true
			break
		}
	}
	if !now {
		return w, idle
	}
	clear(e.queue[w:])
	e.queue = e.queue[:w]
	e.secondCall, e.redoNow = true, true
	w2, idle2 := e.priorityPass(full, keep, nil)
	e.secondCall, e.redoNow = false, false
	return w2, idle || idle2
}

// npRes is a reservation the first call made with node policies: its job,
// and whether it is on the processor profile too (reserveBlocked).
type npRes struct {
	j    *job
	b    *blockedRes
	prof bool
}

// retryOnOwnRes is the second call's try of j, whose reservation from the
// first call starts now: Maui tries the job again (its own reservation
// does not hold against it, and it takes that reservation's nodes first),
// and a job started in the first call may have changed what the node
// policies allow (N->JList, jobtable.go). Seen in a real Maui
// (nodemaxproc, +50117 s): j0229 (81 tasks) found 80 and was reserved
// now, j0230 started on n046 and cut j0213 out of its table, and the
// second call started j0229 with 3 tasks on n046. False, the reservation
// kept, when it still does not start.
func (e *Engine) retryOnOwnRes(j *job) bool {
	k := slices.IndexFunc(e.npRes, func(r npRes) bool { return r.j == j })
	if k < 0 {
		return false
	}
	r := e.npRes[k]
	at := slices.Index(e.blocked, r.b)
	if at < 0 {
		return false
	}
	per := slices.Clone(r.b.per)
	touched := slices.Clone(r.b.touched)
	r.b.clear()
	e.blocked = slices.Delete(e.blocked, at, at+1)
	if r.prof {
		e.prof.add(j.planned, sat(j.planned, j.Walltime), j.Procs)
	}
	if ok, _ := e.prof.fitsFrom(0, j.Procs, j.Walltime); ok {
		if hosts, ok := e.pickHostsFrom(j, sat(e.now, j.Walltime), per); ok {
			e.start(j, hosts)
			e.prof.add(e.now, sat(e.now, j.Walltime), -j.pool)
			j.held = false
			return true
		}
	}
	for _, i := range touched {
		r.b.per[i] = per[i]
	}
	r.b.touched = append(r.b.touched, touched...)
	e.blocked = slices.Insert(e.blocked, at, r.b)
	if r.prof {
		e.prof.add(j.planned, sat(j.planned, j.Walltime), -j.Procs)
	}
	return false
}

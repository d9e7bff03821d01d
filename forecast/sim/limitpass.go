package sim

import (
	"cmp"
	"slices"
)

// limitSelect is what Maui 3.3.1 does with usage limits before a pass
// (MSchedProcessJobs: MQueueSelectAllJobs at the hard level, then at the
// soft one, then MQueueSelectJobs), on the queue in priority order:
//
//   - The first selection walks running and waiting jobs together in
//     priority order, counting each running job's usage as it comes to it
//     (MStatClearUsage, then MPolicyAdjustUsage per running job): a waiting
//     job is checked against the hard limits with the usage of the running
//     jobs ranked above it only. A job blocked there has its queue time
//     restarted (SystemQueueTime = now: JOBPRIOACCRUALPOLICY QUEUEPOLICY,
//     Maui's default) — unless it held a reservation from the previous
//     pass, which exempts it from this check.
//   - With every running job counted, a job within its hard limits gets its
//     effective queue duration (now − SystemQueueTime: what its priority
//     counts at the next pass), and a job within its soft limits takes part
//     in the priority pass; the others wait, without a reservation.
func (e *Engine) limitSelect() {
	l := e.lim
	for _, j := range e.queue {
		if j.lim == nil {
			j.policy().lim = jobLim{sqt: j.Submit}
			j.lim = &j.pol.lim
		}
	}
	e.use.reset()
	for _, j := range e.rankRunningAndQueued() {
		switch {
		case j.started:
			e.use.add(l, j, max(j.wallEnd-e.now, 0))
		case !j.lim.hadRes && l.blocks(&e.use, j, levelHard):
			j.lim.sqt = e.now
		}
	}
	for _, j := range e.queue {
		hard, soft := l.blocksBoth(&e.use, j)
		if !hard {
			j.lim.effQD = e.now - j.lim.sqt
		}
		j.lim.inPass = !soft
	}
}

// rankRunningAndQueued merges the running jobs (by their own start
// priority, which counts the queue time they had when they were last
// selected) into the queue (already in priority order): Maui's
// MQueuePrioritizeJobs sorts its whole job table, equal priorities in
// arrival order.
func (e *Engine) rankRunningAndQueued() []*job {
	all := append(e.order2[:0], e.queue...)
	p := e.policy.Priority
	if p == nil {
		// no priority function: count every running job first
		all = append(append(e.order2[:0], e.running...), e.queue...)
		e.order2 = all
		return all
	}
	run := e.run2[:0]
	for _, j := range e.running {
		j.prio = e.prio(j, j.waited(e.now))
		run = append(run, j)
	}
	e.run2 = run
	if slices.IsSortedFunc(e.queue, byPrio) {
		// (prioritize sorted the queue so): merge the running jobs in
		slices.SortFunc(run, byPrio)
		all = mergeByPrio(e.order2[:0], run, e.queue)
		e.order2 = all
		return all
	}
	all = append(all, run...)
	slices.SortStableFunc(all, byPrio)
	e.order2 = all
	return all
}

// byPrio is the order of Maui's job table: higher priority first, equal
// priorities in arrival order (a total order: seq is unique).
func byPrio(a, b *job) int {
	if a.prio != b.prio {
		return cmp.Compare(b.prio, a.prio)
	}
	return cmp.Compare(a.seq, b.seq)
}

// mergeByPrio appends to dst the merge of a and b, each in byPrio order.
func mergeByPrio(dst, a, b []*job) []*job {
	for len(a) > 0 && len(b) > 0 {
		if byPrio(b[0], a[0]) < 0 {
			dst, b = append(dst, b[0]), b[1:]
		} else {
			dst, a = append(dst, a[0]), a[1:]
		}
	}
	return append(append(dst, a...), b...)
}

// limitBlocked reports whether j may not start now under the limits
// backfill applies (the soft ones, then the hard ones in Maui's second
// round).
func (e *Engine) limitBlocked(j *job) bool {
	return e.lim != nil && e.lim.blocks(&e.use, j, e.level)
}

// windowBlocked is the limit check MBFGetWindow (MBF.c) makes before it
// measures a backfill window: it builds a pseudo-job "BFWindow" of 1
// processor for 1 s with user, group and account [ALL] and their default
// QOS (DEFAULT unless a QDEF applies), checks it with MJobCheckLimits at
// the soft level (in the hard round too) and, when that fails, returns a
// window of no nodes, so no job backfills. [ALL]'s own credentials run
// nothing; the QOS is the one that counts: with QOSCFG[DEFAULT] MAXJOB=8
// and 8 jobs of QOS DEFAULT running, nothing backfills, whatever the QOS
// of the waiting jobs (a real Maui on qoslimits at +2313 s: "job
// BFWindow violates active SOFT MAXJOB limit of 8 for qos DEFAULT",
// "backfill window: time: INFINITY nodes: 0", and lo's j0043 did not
// backfill).
func (e *Engine) windowBlocked() bool {
	if e.lim == nil {
		return false
	}
	if e.bfWin == nil {
		w := Job{ID: "BFWindow", Procs: 1, Walltime: 1, User: "[ALL]", Group: "[ALL]", Account: "[ALL]", Queue: "[ALL]"}
		if e.policy.QOS != nil {
			w.QOS = e.policy.QOS.Of(w)
		}
		e.bfWin = newJob(w, -1)
	}
	return e.lim.blocks(&e.use, e.bfWin, levelSoft)
}

// hardRound is Maui's second backfill, within the hard limits
// (MQueueBackFill at ptHARD), when some soft limit is below its hard one.
func (e *Engine) hardRound(w int) int {
	if e.lim == nil || !e.backfills || !e.lim.softDiffers() {
		return w
	}
	e.level = levelHard
	e.backfill(e.queue[:w])
	e.level = levelSoft
	return e.dropStarted(w)
}

// noteReservations records which waiting jobs hold a reservation as the
// pass ends (Maui keeps it until the next pass's reservation step).
func (e *Engine) noteReservations() {
	for _, j := range e.queue {
		j.lim.hadRes = j.held || j.kept
	}
}

// limitRedo is Maui's second call of the priority pass (MSchedProcessJobs
// runs MQueueScheduleIJobs on the default partitions, then again with
// backfill): a job a limit refused in the first call, before IdleJobFound,
// was reserved there as a job that does not fit (MJobPReserve), holding
// its nodes against the jobs after it; the second call's MQueueSelectJobs
// refuses it and drops that reservation, and so it does for a job
// reserved there as one that does not fit when a job started after it
// took it over a limit (limits at +258 s). The pass then runs again, the
// jobs reserved in the first call keeping theirs (and counting against the
// depth), so a job after them may now start or get the freed place.
// Maui always runs the second call; it is skipped here only when it cannot
// differ from the first. A job refused before IdleJobFound with the depth
// full was not reserved: its failed MJobPReserve set IdleJobFound, so the
// first call looked at no job after it, and the second, without it, does
// (maxjob at +16623 s: j0042, refused by u03's MAXJOB with the depth full,
// ended the first call; the second started j0048, which the simulator had
// left to backfill, where the window measured with j0048's nodes still
// free was shorter than Maui's and j0106 started instead of j0075).
func (e *Engine) limitRedo(w int, idle, full, keep bool, minAfter []int) (int, bool) {
	redo := false
	for _, j := range e.queue[:w] {
		switch {
		case j.lim.limRes:
			// refused before IdleJobFound: reserved, or (depth full)
			// the job whose failed MJobPReserve set IdleJobFound; either
			// way the second call leaves it out and may go further
			j.lim.limRes = false
			redo = true
		case j.held && !j.kept && j.lim.limB != nil && e.lim.blocks(&e.use, j, levelSoft):
			// reserved in the first call as a job that does not fit,
			// then a job started after it took it over a limit: the
			// second call's MQueueSelectJobs refuses it too
		default:
			continue
		}
		j.lim.inPass = false
		if !j.held || j.lim.limB == nil {
			continue
		}
		e.dropHeld(j)
		redo = true
	}
	if !redo {
		return w, idle
	}
	clear(e.queue[w:])
	e.queue = e.queue[:w]
	e.limitReselect(levelSoft)
	if minAfter != nil {
		minAfter = e.suffixMinProcs()
	}
	e.secondCall = true
	w2, idle2 := e.priorityPass(full, keep, minAfter)
	e.secondCall = false
	e.dropLimitRes(w2)
	return w2, idle || idle2
}

// limitReselect is the MQueueSelectJobs that opens Maui's second call: a
// waiting job the first call's starts took over a limit at level lv is
// not in the second call (it would otherwise be reserved there as a job
// refused before IdleJobFound).
func (e *Engine) limitReselect(lv limitLevel) {
	for _, j := range e.queue {
		if j.lim.inPass && !j.started && e.lim.blocks(&e.use, j, lv) {
			j.lim.inPass = false
		}
	}
}

// dropLimitRes is the hard-level MQueueSelectJobs after Maui's second call
// (before its hard backfill): a job a limit refused in the second call
// before IdleJobFound was reserved there (MJobPReserve) and held its
// nodes against the jobs after it in that call; when it is still over a
// hard limit the selection refuses it and destroys that reservation, so
// backfill finds those processors free (maxproc at +0 s: j0025 and j0026
// reserved now, j0027 after them at +1800 s, then j0025's and j0026's
// reservations dropped and j0050 backfilled).
func (e *Engine) dropLimitRes(w int) {
	for _, j := range e.queue[:w] {
		if !j.lim.limRes {
			continue
		}
		j.lim.limRes = false
		if !e.lim.blocks(&e.use, j, levelHard) {
			continue // within its hard limits: Maui keeps the reservation
		}
		j.lim.inPass = false
		if j.held && j.lim.limB != nil {
			e.dropHeld(j)
		}
	}
}

// dropHeld forgets j's reservation made this pass.
func (e *Engine) dropHeld(j *job) {
	b := j.lim.limB
	for k, o := range e.blocked {
		if o == b {
			b.clear()
			e.blocked = append(e.blocked[:k], e.blocked[k+1:]...)
			break
		}
	}
	if j.lim.limProf {
		e.prof.add(j.planned, sat(j.planned, j.Walltime), j.Procs)
	}
	j.held, j.lim.limB, j.planned = false, nil, never
}

package sim

// priorityPass is Maui's MQueueScheduleIJobs: the queue in priority order,
// each job started if it fits now, else reserved while fewer than the
// depth hold a reservation. The first job that cannot be reserved (the
// depth is full, or no reservation could be made) is Maui's
// IdleJobFound: from there no job starts in this pass, though later jobs
// still get reservations while the depth allows. It compacts the queue
// to the jobs still waiting and returns their number, and whether a job
// was left neither started nor reserved (then backfill may start it).
//
// Each job takes the steps of passJob; a policy that changes what happens
// to a job in the pass belongs in one of them: whether it is looked at
// (passHeld, passSelect), whether it starts now (passSelect), whether the
// pass may stop before it (passEarlyStop), its reservation (passReserve)
// and whether the pass stops after it (passStopAfter).
func (e *Engine) priorityPass(full, keep bool, minAfter []int) (int, bool) {
	ps := e.newPass(full, keep, minAfter)
	for k := 0; k < len(ps.q); k++ {
		if ps.stopped || (ps.idle && !ps.room) {
			e.keepRest(&ps, k) // nothing more happens in this pass
			break
		}
		e.passJob(&ps, k)
	}
	return ps.w, ps.idle
}

// passState is one priority pass walking the queue.
type passState struct {
	q        []*job
	w        int  // q[:w] are the jobs still waiting, compacted
	reserved int  // reservations counted against the depth
	room     bool // the depth allows another reservation
	idle     bool // IdleJobFound: no job starts from here
	stopped  bool // nothing more happens in this pass
	// full and keep are a kept conservative plan and RESERVATIONPOLICY
	// HIGHEST; minAfter the fewest processors a job from k on asks for
	// (unbounded passes), nil otherwise.
	full, keep bool
	minAfter   []int
	// early: the pass may stop once no later job fits now (laterFits);
	// tighter: an unbounded pass asks after every reservation. With early,
	// no job in q[k+1:next] fits now.
	early, tighter bool
	next           int
}

func (e *Engine) newPass(full, keep bool, minAfter []int) passState {
	// (standing reservations: a job inside a window's ACL may start on
	// nodes the processor profile holds, so laterFits would stop too soon;
	// TestEarlyStopSameSchedule has no standing reservations)
	early := e.lim == nil && e.nlim == nil && len(e.srs) == 0 && !keep && !full && !e.noEarlyStop
	if !e.secondCall {
		e.clearHeld()
		clear(e.npRes)
		e.npRes = e.npRes[:0]
	}
	e.bfFrom = 0
	return passState{q: e.queue, room: e.depth != 0, full: full, keep: keep, minAfter: minAfter,
		early: early, tighter: minAfter != nil && early}
}

// keepRest keeps the queue from k on as it is (a first call finds none of
// it held: clearHeld).
func (e *Engine) keepRest(ps *passState, k int) {
	q := ps.q
	if !e.secondCall {
		ps.w += copy(q[ps.w:], q[k:])
		return
	}
	for ; k < len(q); k++ {
		j := q[k]
		if !j.kept {
			j.held = false
		}
		q[ps.w] = j
		ps.w++
	}
}

// passJob is q[k]'s turn in the pass.
func (e *Engine) passJob(ps *passState, k int) {
	j := ps.q[k]
	ps.q[ps.w] = j
	ps.w++
	if j.kept || (e.secondCall && j.held) {
		e.passHeld(ps, j)
		return
	}
	j.held = false
	if j.started {
		ps.w--
		return
	}
	if !e.passSelect(ps, j) {
		return
	}
	if ps.early && !ps.tighter && !ps.idle && e.passEarlyStop(ps, k) {
		return
	}
	if e.passReserve(ps, j) {
		e.passStopAfter(ps, k)
	}
}

// countReservation counts one more reservation against the depth.
func (ps *passState) countReservation(depth int) {
	ps.reserved++
	ps.room = depth < 0 || ps.reserved < depth
}

// passHeld is a job that holds a reservation already: a kept one
// (HIGHEST), or one made in the first call when this is the second.
func (e *Engine) passHeld(ps *passState, j *job) {
	if e.redoNow && !j.kept && j.planned <= e.now {
		// its reservation starts now: tried again (a job started since
		// may have changed what the node policies allow), else
		// MJobPReserve refuses it (nodelimits.go)
		if e.retryOnOwnRes(j) {
			ps.w--
			return
		}
		ps.idle = true
		return
	}
	ps.countReservation(e.depth) // it keeps its reservation, which counts
}

// passSelect is whether j goes on to a reservation: false when it started
// now or is not looked at in this pass.
func (e *Engine) passSelect(ps *passState, j *job) bool {
	if e.fsCapped(j) {
		return false // not selected: over a fairshare cap
	}
	if e.lim != nil && (!j.lim.inPass || e.lim.blocks(&e.use, j, levelSoft)) {
		if !j.lim.inPass || ps.idle {
			return false // not in this pass, or refused after IdleJobFound
		}
		// refused before IdleJobFound (a job started earlier in this
		// pass): Maui reserves it as a job that does not fit, in either
		// call; the reservation holds until the next MQueueSelectJobs
		// refuses the job (limitRedo)
		j.lim.limRes = true
		return true
	}
	if !ps.idle && e.startNow(j) {
		ps.w--
		return false
	}
	return true
}

// passEarlyStop reports whether the pass stops before reserving q[k]:
// every job before it started or holds a reservation, and neither it nor
// any after it fits now, so nothing more starts.
func (e *Engine) passEarlyStop(ps *passState, k int) bool {
	if !e.laterFits(ps.q, k-1, &ps.next) {
		ps.stopped = true
		return true
	}
	// none of q[k:next] fits now, nor will in this pass (see
	// backfillFrom); q[k] is at w-1 once the queue is compacted
	e.bfFrom = max(ps.next-(k+1-ps.w)-1, 0)
	return false
}

// passReserve reserves j while the depth allows; false when the pass goes
// on to the next job at once.
func (e *Engine) passReserve(ps *passState, j *job) bool {
	switch {
	case ps.room:
		if e.reserveInPass(j, ps.keep, ps.idle) {
			if j.lim != nil {
				// (any reservation: the second call may drop it,
				// limitRedo)
				j.lim.limB, j.lim.limProf = e.blocked[len(e.blocked)-1], e.onProfile
			}
			if e.nlim != nil && !e.secondCall {
				e.npRes = append(e.npRes, npRes{j, e.blocked[len(e.blocked)-1], e.onProfile})
			}
			ps.countReservation(e.depth)
			return true
		}
		if j.started {
			// started on a reservation starting now (after IdleJobFound):
			// MJobPReserve counted it against the depth all the same
			ps.w--
			ps.countReservation(e.depth)
			return false
		}
		ps.idle = true
		return true
	case e.backfills:
		ps.idle = true
	default:
		ps.stopped = true
	}
	return false
}

// passStopAfter decides whether the pass stops after q[k]'s reservation.
func (e *Engine) passStopAfter(ps *passState, k int) {
	free := e.prof.steps[0].free
	if ps.minAfter != nil {
		ps.stopped = free < ps.minAfter[k+1] || (ps.tighter && !e.laterFits(ps.q, k, &ps.next))
		return
	}
	// (with limits, Maui's later reservations matter: limitRedo may free
	// processors, and the next pass spares reserved jobs)
	// (a window's ACL jobs may start beyond the profile)
	ps.stopped = !ps.full && !ps.keep && e.lim == nil && free <= 0 && !e.srACL
}

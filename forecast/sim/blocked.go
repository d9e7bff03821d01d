package sim

import "slices"

// blockedRes is a blocked job's reservation: per[i] are the processors it
// holds on node i over [s, e). Made for one pass (from a pool), or kept
// across passes under RESERVATIONPOLICY HIGHEST.
type blockedRes struct {
	s, e    int64
	per     []int
	touched []int
	seq     int64 // creation order, see nevent
	kept    bool
}

// newBlocked starts a reservation for this pass over [s, end), after all
// others in Maui's event order.
func (e *Engine) newBlocked(s, end int64) *blockedRes {
	if e.poolUsed == len(e.blockPool) {
		e.blockPool = append(e.blockPool, &blockedRes{per: make([]int, len(e.nodes))})
	}
	b := e.blockPool[e.poolUsed]
	e.poolUsed++
	e.blocked = append(e.blocked, b)
	e.rseq++
	b.s, b.e, b.seq = s, end, e.rseq
	return b
}

func (b *blockedRes) clear() {
	for _, i := range b.touched {
		b.per[i] = 0
	}
	b.touched = b.touched[:0]
}

// dropLastBlocked forgets the reservation newBlocked made last.
func (e *Engine) dropLastBlocked() {
	b := e.blocked[len(e.blocked)-1]
	b.clear()
	e.blocked = e.blocked[:len(e.blocked)-1]
	e.poolUsed--
}

// dropBlockedHolds forgets this pass's reservations; kept ones stay.
func (e *Engine) dropBlockedHolds() {
	w := 0
	for _, b := range e.blocked {
		if b.kept {
			e.blocked[w] = b
			w++
			continue
		}
		b.clear()
	}
	clear(e.blocked[w:])
	e.blocked = e.blocked[:w]
	e.poolUsed = 0
}

// keepReservation makes j's reservation, the last one made, outlive the
// pass (RESERVATIONPOLICY HIGHEST).
func (e *Engine) keepReservation(j *job) {
	b := e.blocked[len(e.blocked)-1]
	k := &blockedRes{s: b.s, e: b.e, per: make([]int, len(e.nodes)), touched: slices.Clone(b.touched), seq: b.seq, kept: true}
	for _, i := range b.touched {
		k.per[i] = b.per[i]
	}
	b.clear()
	e.poolUsed--
	e.blocked[len(e.blocked)-1] = k
	j.kept, j.keptRes = true, k
}

// releaseKept drops j's kept reservation.
func (e *Engine) releaseKept(j *job) {
	if !j.kept {
		return
	}
	if i := slices.Index(e.blocked, j.keptRes); i >= 0 {
		e.blocked = slices.Delete(e.blocked, i, i+1)
	}
	j.kept, j.keptRes = false, nil
}

// renewKept is Maui's first step of a pass under RESERVATIONPOLICY HIGHEST
// (MQueueScheduleRJobs): in priority order, every job holding a
// reservation gets it made again (possibly earlier, the others still
// holding theirs), and a job whose reservation starts now starts, on its
// reserved nodes first.
func (e *Engine) renewKept() {
	for _, j := range e.queue {
		if !j.kept {
			continue
		}
		e.releaseKept(j)
		t := e.reserveRanges(j, e.now)
		j.planned = t
		if t != never {
			e.setHeld(j)
		} else {
			j.held = false
		}
		if t == never {
			continue
		}
		e.keepReservation(j)
		if t > e.now {
			continue
		}
		res := j.keptRes
		e.releaseKept(j)
		if hosts, ok := e.pickHostsFrom(j, sat(e.now, j.Walltime), res.per); ok {
			e.start(j, hosts)
			e.stale++
			continue
		}
		// not startable after all (a later dip on its nodes): it keeps
		// the reservation
		e.blocked = append(e.blocked, res)
		j.kept, j.keptRes = true, res
	}
	e.compactQueue()
}

package sim

import (
	"time"

	"lookahead/forecast"
)

// srState is one standing reservation in an engine: its nodes and the
// windows made so far (Maui's SR->R[0..Depth-1]; one window may fill two
// entries, as Maui can make the same period twice when it rolls).
type srState struct {
	sr    *StandingRes
	hosts []hostUse
	inst  []*resv
}

// srIdle is how long after the last arrival or start the engine keeps
// stepping onto standing-reservation edges when nothing else will happen:
// a week and a day covers every period, so a job that can start between
// windows has; one that never can is stuck.
const srIdle = weekLen + dayLen

func (e *Engine) initStanding() {
	e.zone = e.policy.Standing.Zone
	if e.zone == nil {
		e.zone = time.UTC
	}
	e.srDay = never
	for k := range e.policy.Standing.Res {
		s := &e.policy.Standing.Res[k]
		st := srState{sr: s, inst: make([]*resv, s.Depth)}
		e.srACL = e.srACL || s.hasACL()
		for _, name := range s.Hosts {
			i, ok := e.byName[name]
			if !ok || !e.nodes[i].usable {
				continue
			}
			p := e.nodes[i].procs
			if s.Procs > 0 {
				p -= p % s.Procs
			}
			if p > 0 {
				st.hosts = append(st.hosts, hostUse{node: i, procs: p})
			}
		}
		if len(s.Hosts) == 0 && s.TaskCount > 0 {
			st.hosts = e.srTaskHosts(s) // standing_task.go
		}
		e.srs = append(e.srs, st)
	}
}

// localDay is the day (in the zone) that t falls on, as a day count.
func (e *Engine) localDay(t int64) int64 {
	_, off := time.Unix(t, 0).In(e.zone).Zone()
	return (t + int64(off)) / dayLen
}

// refreshStanding is MSRUpdate, run at the first pass of each day: for
// each standing reservation whose oldest window has ended, it drops that
// window, moves the others down and makes the missing ones, the last for
// the period Depth-1 from now.
func (e *Engine) refreshStanding() {
	day := e.localDay(e.now)
	if day == e.srDay {
		return
	}
	e.srDay = day
	for k := range e.srs {
		st := &e.srs[k]
		if r := st.inst[0]; r != nil {
			if r.r.End > e.now {
				continue
			}
			e.dropStanding(st, 0)
		}
		if len(st.hosts) == 0 {
			continue
		}
		d := 0
		for ; d < len(st.inst)-1; d++ {
			st.inst[d], st.inst[d+1] = st.inst[d+1], nil
			if st.inst[d] == nil {
				st.inst[d] = e.makeStanding(st, d)
			}
		}
		st.inst[d] = e.makeStanding(st, d)
	}
}

// makeStanding makes the window of period k from now (MSRSetRes), or
// returns nil when that period holds nothing. A window equal to one
// already made is shared.
func (e *Engine) makeStanding(st *srState, k int) *resv {
	s, t, ok := st.sr.window(e.now, k, e.zone)
	if !ok || t <= e.now {
		return nil
	}
	for _, r := range st.inst {
		if r != nil && r.r.Start == s && r.r.End == t {
			return r
		}
	}
	e.srSeq++
	r := forecast.Reservation{ID: st.sr.Name + "." + itoa(e.srSeq), Start: s, End: t, Standing: true,
		Hosts: make([]forecast.HostProcs, len(st.hosts))}
	for i, h := range st.hosts {
		r.Hosts[i] = forecast.HostProcs{Node: e.nodes[h.node].name, Procs: h.procs}
	}
	e.add(r, st.hosts)
	rv := e.findResv(r.ID)
	rv.sr, rv.def = true, st.sr
	return rv
}

func (e *Engine) findResv(id string) *resv {
	for _, r := range e.resvs {
		if r.r.ID == id {
			return r
		}
	}
	return nil
}

// dropStanding forgets entry d, dropping its window unless another entry
// shares it (apply may have dropped it already, at its end).
func (e *Engine) dropStanding(st *srState, d int) {
	r := st.inst[d]
	st.inst[d] = nil
	for _, o := range st.inst {
		if o == r {
			return
		}
	}
	for i, o := range e.resvs {
		if o == r {
			e.drop(i)
			return
		}
	}
}

// standingNext lowers t to the next edge of a standing reservation's
// window (made or not: Maui iterates there on a live site and the
// reference driver steps there) while something can still happen.
func (e *Engine) standingNext(t int64, ok bool) (int64, bool) {
	if !ok && (len(e.queue) == 0 || e.now-e.lastAct > srIdle) {
		return t, ok
	}
	if e.srNext <= e.now {
		e.srNext = e.nextStandingEdge()
	}
	if e.srNext < t {
		return e.srNext, true
	}
	return t, ok
}

// nextStandingEdge is the first window start or end after now.
func (e *Engine) nextStandingEdge() int64 {
	next := int64(never)
	for _, st := range e.srs {
		if len(st.hosts) == 0 {
			continue
		}
		for _, w := range st.sr.Windows(e.now, e.now+weekLen+dayLen, e.zone) {
			for _, x := range w {
				if x > e.now && x < next {
					next = x
				}
			}
		}
	}
	return next
}

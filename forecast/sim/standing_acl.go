package sim

import "slices"

// Jobs inside a standing reservation's ACL (Maui: MJobGetSNRange →
// MResCheckJAccess makes the window inclusive for them; MResAdjustDRes
// takes what they use in it off what it blocks for the others). Active
// only when some standing reservation has an ACL (e.srACL).

// admits reports whether hold r does not hold against the job node-level
// checks are made for (e.acl): a window whose ACL admits it.
func (e *Engine) admits(r *resv) bool {
	if e.bfAll {
		return r.def != nil && r.def.admitsAll()
	}
	return e.acl != nil && r.def != nil && r.def.Admits(e.acl.Job)
}

// admitsAll reports whether the window's ACL admits Maui's backfill probe
// (MBFGetWindow's pseudo-job BFWindow, user, group and account "[ALL]",
// class MClassFind("[ALL]"): Maui's class table always holds a class
// named [ALL], MClassAdd(ALL) at start): MACLCheckAccess's mcmpSEQ
// matches the name [ALL] with any entry, so a USERLIST, GROUPLIST,
// ACCOUNTLIST or CLASSLIST admits it. A QOSLIST does not: the probe's
// QOS is DEFAULT, which MJobBuildCL leaves out of its credentials. Seen in
// siteheld (LOGLEVEL 7, +8995 s): "node n048 supports 4 tasks of job
// BFWindow:0 for INFINITY" through an INFINITY window with CLASSLIST=short
// only, and j0089 (class short) backfilled there.
func (s *StandingRes) admitsAll() bool {
	return len(s.Users)+len(s.Groups)+len(s.Accounts)+len(s.Classes) > 0
}

// bfACL reports whether backfill treats j as a job inside a window's ACL:
// its node checks admit the windows, and the processor profile (which
// counts the windows against everyone) does not decide, as in
// startNowACL.
func (e *Engine) bfACL(j *job) bool {
	return e.srACL && !e.unbounded && !e.keepPlan && e.inACL(j)
}

// inACL reports whether some standing reservation's ACL admits j.
func (e *Engine) inACL(j *job) bool {
	for _, st := range e.srs {
		if st.sr.hasACL() && st.sr.Admits(j.Job) {
			return true
		}
	}
	return false
}

// startNowACL is startNow for a job inside a window's ACL: the processor
// profile counts the windows against everyone, so only the nodes decide
// (with reservations of blocked jobs on nodes, as when windows exist).
func (e *Engine) startNowACL(j *job) bool {
	e.acl = j
	hosts, ok := e.pick(j, sat(e.now, j.Walltime), nil, e.affinity(j))
	e.acl = nil
	if !ok {
		return false
	}
	e.start(j, hosts)
	e.prof.add(e.now, sat(e.now, j.Walltime), -j.pool)
	e.unshare(j)
	return true
}

// unshare gives back on the profile what running job j holds inside a
// window on the window's nodes: the window holds those processors
// already (Maui's MResAdjustDRes), so they must not count twice.
func (e *Engine) unshare(j *job) {
	for _, h := range j.hosts {
		for _, nh := range e.nodes[h.node].holds {
			if !nh.r.sr {
				continue
			}
			s, t := max(nh.s, j.start, e.now), min(nh.e, j.wallEnd)
			if s < t {
				e.prof.add(s, t, min(h.procs, nh.procs))
			}
		}
	}
}

// unshareRunning is unshare for every running job, after buildProfile.
func (e *Engine) unshareRunning() {
	for _, j := range e.running {
		e.unshare(j)
	}
}

// affinity marks the nodes of windows in force now whose ACL admits j:
// Maui tries nodes a job has positive affinity to first.
func (e *Engine) affinity(j *job) []int {
	if len(e.affBuf) != len(e.nodes) {
		e.affBuf = make([]int, len(e.nodes))
	}
	pref := e.affBuf
	clear(pref)
	for _, r := range e.resvs {
		if r.def == nil || r.r.End <= e.now || !r.def.Admits(j.Job) {
			continue
		}
		for _, h := range r.hosts {
			if pref[h.node] != 0 {
				continue
			}
			pref[h.node] = -1 // not reached
			if r.r.Start <= e.now {
				pref[h.node] = 1
				continue
			}
			ev := e.nodeEvents(h.node)
			if _, _, k, ok := e.nodeProbeK(h.node, ev, j.Procs, j.PPN, j.Walltime); ok && r.r.Start <= e.walkReach(h.node, ev, e.now, k) {
				pref[h.node] = 1
			}
		}
	}
	for i := range pref {
		pref[i] = max(pref[i], 0)
	}
	return pref
}

// resOrderFor is the order a reservation for j over [s, end) takes nodes
// in. For a job inside a window's ACL (e.acl), Maui's MJobAllocMNL walks
// the feasible nodes once per affinity level (ResourceIteration: required,
// positive, neutral, …): the nodes of the windows over [s, end) admitting
// j have positive affinity (MJobGetSNRange → MResCheckJAccess), so they
// come first, each level in the policy's order (LASTAVAILABLE: n003 n002
// n001, then n031 n030 …, seen in a LOGLEVEL 7 log of sracl at +0 s).
func (e *Engine) resOrderFor(j *job, s, end int64) []int {
	if e.acl != j {
		return e.resOrder
	}
	pref := e.affinityOver(j, s, end)
	order := e.ordBuf[:0]
	for pass := 0; pass < 2; pass++ {
		for _, i := range e.resOrder {
			if (pref[i] > 0) == (pass == 0) {
				order = append(order, i)
			}
		}
	}
	e.ordBuf = order
	return order
}

// affinityOver marks the nodes of the windows over [s, end) whose ACL
// admits j.
func (e *Engine) affinityOver(j *job, s, end int64) []int {
	if len(e.affBuf) != len(e.nodes) {
		e.affBuf = make([]int, len(e.nodes))
	}
	pref := e.affBuf
	clear(pref)
	for _, r := range e.resvs {
		if r.def != nil && r.r.End > s && r.def.Admits(j.Job) {
			for _, h := range r.hosts {
				pref[h.node] = 1
			}
		}
	}
	return pref
}

// walkReach is how far MJobGetSNRange walks node i's reservations (ev,
// those admitting the job left out: inclusive) when asked for k tasks
// from s: to the first instant after s where fewer than k are left (the
// range ends there, and with it the walk; every event of that instant is
// walked), or all of them (never). A reservation the walk reaches gives
// the node its affinity: one admitting the job makes the node one the
// job takes first (MJobAllocMNL's affinity levels), whenever it lies.
// Seen in a real Maui (srmix, +2645 s, LOGLEVEL 7): for j0062 (2 tasks)
// the walk reached the office window on n003 and n004, not on n005
// (j0029's reservation took all of it first), and n004 was taken.
func (e *Engine) walkReach(i int, ev []nevent, s int64, k int) int64 {
	free := e.nodes[i].procs
	for x := 0; x < len(ev); {
		t := ev[x].t
		for ; x < len(ev) && ev[x].t == t; x++ {
			if ev[x].start {
				free -= ev[x].amt
			} else {
				free += ev[x].amt
			}
		}
		if t > s && free < k {
			return t
		}
	}
	return never
}

// inclusiveEvents appends the events of window hold h on node i, which
// admits the job the node is looked at for: they take nothing, but Maui
// walks them (MJobGetSNRange: the reservation is inclusive, and its end
// sets ResourcesRemoved, so a count that grew at that instant opens no
// new range), and the window is cut into pieces wherever a job inside
// it starts or ends on the node (MResAdjustDRes recomputes what it
// blocks at every job event: "E office.0 … S office.0" at j0025's end in
// srmix, +4042 s, where the backfill probe's range on n003 went on to
// INFINITY and j0021 (8 h) backfilled there; sracl +1125 s, j0060 on n001
// the same way).
func (e *Engine) inclusiveEvents(ev []nevent, i int, h nhold) []nevent {
	cuts := e.tsBuf2[:0]
	for _, r := range e.nodes[i].run {
		if h.r.def == nil || !h.r.def.Admits(r.j.Job) {
			continue
		}
		for _, t := range [2]int64{r.j.start, max(r.j.wallEnd, r.j.end)} {
			if t > h.s && t < h.e {
				cuts = append(cuts, t)
			}
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	e.tsBuf2 = cuts
	s := h.s
	for _, t := range append(cuts, h.e) {
		ev = append(ev, nevent{t: s, start: true, incl: true, rs: s, re: t, seq: h.r.seq},
			nevent{t: t, incl: true, rs: s, re: t, seq: h.r.seq})
		s = t
	}
	return ev
}

// inclusiveCut reports whether admitted window hold h on node i has an
// end at t (its own, or a piece's where a job inside it starts or ends,
// inclusiveEvents): an instant Maui's walk treats as one where resources
// were taken.
func (e *Engine) inclusiveCut(i int, h nhold, t int64) bool {
	if t == h.e {
		return true
	}
	for _, r := range e.nodes[i].run {
		if (r.j.start == t || max(r.j.wallEnd, r.j.end) == t) && h.r.def != nil && h.r.def.Admits(r.j.Job) {
			return true
		}
	}
	return false
}

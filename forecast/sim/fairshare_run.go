package sim

// The engine's side of fairshare: usage accrual at each iteration, the
// interval turns, the edges as events and the priority component.

// fsIterate is what Maui's iteration at e.now does to fairshare, called
// once ended jobs are gone: first the interval turn the previous
// iteration made when it finished (ServerProcessRequests runs after the
// scheduling, so a turn counts from the next iteration on), then this
// iteration's usage: every running job adds min(time since the previous
// iteration, time since it started) × its processors
// (MStatUpdateActiveJobUsage; a job ending now adds nothing, Maui
// terminates it first).
func (e *Engine) fsIterate() {
	f := e.fs
	if e.fsRoll(f.last) {
		e.planValid = false
	}
	gap := e.now - f.last
	if gap <= 0 {
		return
	}
	// every running job started at an iteration (or, seeded from a
	// snapshot, before the first), so min(gap, now − start) is gap; the
	// per-credential sums are exact (whole processor-seconds)
	for _, u := range f.rated {
		u.Usage[0] += u.rate * float64(gap)
	}
	f.last = e.now
}

// fsRoll turns the interval when t lies in a later one than the current
// (MFSUpdateData rotate: every history moves back one interval, the
// current starts at zero, the factors are recomputed); the first call
// only sets it. It reports whether usage moved.
func (e *Engine) fsRoll(t int64) bool {
	f := e.fs
	iv := f.cfg.Interval
	at := t - t%iv
	if f.rolled && at == f.st.Interval {
		return false
	}
	first := !f.rolled
	f.st.Interval, f.rolled = at, true
	if first {
		return false
	}
	f.rotate(&f.st.Total)
	for _, m := range f.st.Cred {
		for _, u := range m {
			f.rotate(u)
		}
	}
	return true
}

func (f *fsRun) rotate(u *FSUsage) {
	copy(u.Usage[1:], u.Usage[:maxFSDepth-1])
	u.Usage[0] = 0
	u.factor = f.factorOf(u)
}

// onRun starts charging j's processors to its credentials and the
// total from the next iteration on (e.run); onEnd stops it (e.finish,
// before the iteration's charge).
func (f *fsRun) onRun(j *job) {
	var us [fsCreds + 1]*FSUsage
	for k, name := range [fsCreds]string{j.User, j.Group, j.Account, j.QOS, j.Queue} {
		if name != "" {
			us[k] = f.usage(FSCred(k), name)
		}
	}
	us[fsCreds] = &f.st.Total
	f.jobs[j] = us
	f.addRate(us, float64(j.Procs))
}

func (f *fsRun) onEnd(j *job) {
	if us, ok := f.jobs[j]; ok {
		delete(f.jobs, j)
		f.addRate(us, -float64(j.Procs))
	}
}

func (f *fsRun) addRate(us [fsCreds + 1]*FSUsage, d float64) {
	for _, u := range us {
		if u == nil {
			continue
		}
		if u.at == 0 {
			f.rated = append(f.rated, u)
			u.at = len(f.rated)
		}
		if u.rate += d; u.rate == 0 {
			last := f.rated[len(f.rated)-1]
			f.rated[u.at-1], last.at = last, u.at
			f.rated = f.rated[:len(f.rated)-1]
			u.at = 0
		}
	}
}

// fsNextEdge is the first interval edge after t (FSINTERVAL counted from
// the epoch): Maui iterates there, so it is an event.
func (e *Engine) fsNextEdge(t int64) int64 {
	iv := e.fs.cfg.Interval
	return t - t%iv + iv
}

// fsComponent is the priority's fairshare component of j before the
// FSWEIGHT (MJobGetStartPriority): per credential with a target, the
// target less the credential's share of all usage in percent (or 1 −
// share/target with FSPOLICY …%), only the part below a floor or above a
// ceiling, nothing for caps; capped by FSUSERCAP … and weighted by
// FSUSERWEIGHT …. Zero while no usage is recorded.
func (e *Engine) fsComponent(j *job) float64 {
	f := e.fs
	tot := f.st.Total.share()
	if tot <= 0 {
		return 0
	}
	p := e.policy.Priority
	w := [fsCreds]int64{p.FSUser, p.FSGroup, p.FSAccount, p.FSQOS, p.FSClass}
	c := [fsCreds]float64{p.Caps.FSUser, p.Caps.FSGroup, p.Caps.FSAccount, p.Caps.FSQOS, p.Caps.FSClass}
	comp := 0.0
	for k, name := range [fsCreds]string{j.User, j.Group, j.Account, j.QOS, j.Queue} {
		if w[k] == 0 || name == "" {
			continue // weighs nothing (Maui adds 0 × a finite subfactor)
		}
		t, ok := f.cfg.target(FSCred(k), name)
		if !ok {
			continue // Maui: no credential, no subfactor
		}
		pct := 0.0
		if u := f.st.Cred[k][name]; u != nil {
			pct = u.share() / tot * 100
		}
		comp += float64(w[k]) * capped(fsFactor(t, pct, f.cfg.Percent), c[k])
	}
	return comp
}

// fsFactor is one credential's subfactor for target t at share pct.
func fsFactor(t FSTarget, pct float64, percent bool) float64 {
	s := t.Value - pct
	if percent {
		s = 1 - pct/t.Value
	}
	switch t.Mode {
	case FSCeiling:
		return min(s, 0)
	case FSFloor:
		return max(s, 0)
	case FSCapAbs, FSCapRel:
		return 0
	}
	return s
}

// prio is j's priority when it counts as having waited that long, with
// the fairshare component when the site has fairshare.
func (e *Engine) prio(j *job, waited int64) int64 {
	if e.fs == nil {
		return e.policy.Priority.ofJob(j, waited, 0)
	}
	return e.policy.Priority.ofJob(j, e.cappedWaited(j, waited), e.fsComponent(j))
}

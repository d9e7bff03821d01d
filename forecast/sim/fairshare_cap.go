package sim

// Fairshare caps: a credential whose FSTARGET is a cap ("^" absolute, "%"
// relative) makes its jobs unselectable while its usage, with the job's
// own request, is over it (MFSCheckCap, called by MQueueSelectJobs): they
// neither start nor get a reservation nor backfill, and keep the
// effective queue duration of the last iteration that selected them.

// fsSelect is the cap check of this pass's job selection, after the
// priorities: it records the jobs refused and, for each newly refused,
// the queue time Maui's last selection recorded (its effective queue
// duration: the previous pass less its submission when it was queued
// then, else 0, which Maui reads as "count from the submission").
func (e *Engine) fsSelect() {
	f := e.fs
	for _, j := range e.queue {
		if j.started {
			continue
		}
		if !f.overCap(j) {
			delete(f.capped, j)
			continue
		}
		if _, was := f.capped[j]; !was {
			q := int64(0)
			if j.arrive <= e.prevIter && e.prevIter < e.now {
				q = max(e.prevIter-j.Submit, 0)
			}
			f.capped[j] = q
		}
	}
}

// fsCapped reports whether j was refused by a cap in this pass.
func (e *Engine) fsCapped(j *job) bool {
	if e.fs == nil || !e.fs.caps {
		return false
	}
	_, ok := e.fs.capped[j]
	return ok
}

// overCap is MFSCheckCap: any of j's credentials whose own target is a
// cap, with usage + decayed usage + j's request above it (the request is
// processors × walltime, or the processor equivalents alone under
// DEDICATEDPES; "%" compares percent of the total).
func (f *fsRun) overCap(j *job) bool {
	req := float64(j.Procs) * float64(j.Walltime)
	if f.cfg.Policy == FSDedicatedPES {
		req = float64(j.Procs)
	}
	tot := f.st.Total.share()
	for k, name := range [fsCreds]string{j.User, j.Group, j.Account, j.QOS, j.Queue} {
		t, ok := f.cfg.Targets[k][name]
		if !ok || name == "" || (t.Mode != FSCapAbs && t.Mode != FSCapRel) {
			continue
		}
		use := req
		if u := f.st.Cred[k][name]; u != nil {
			use += u.share()
		}
		if t.Mode == FSCapRel {
			if tot <= 0 {
				continue
			}
			use = use / tot * 100
		}
		if use > t.Value {
			return true
		}
	}
	return false
}

// cappedWaited is the queue time a job refused at the previous pass
// counts in this pass's priority: the frozen effective queue duration, or
// the time since its submission when none was recorded.
func (e *Engine) cappedWaited(j *job, waited int64) int64 {
	if !e.fs.caps {
		return waited
	}
	q, ok := e.fs.capped[j]
	switch {
	case !ok:
		return waited
	case q > 0:
		return q
	}
	return max(e.now-j.Submit, 0)
}

func (e *Engine) fsCapsOn() bool { return e.fs != nil && e.fs.caps }

package sim

import "math/bits"

// Usage limits: Maui 3.3.1's active throttling policies (MJobCheckLimits,
// MPolicyCheckLimit, MPolicyAdjustUsage; docs/simulator.md, "Usage
// limits", says how Maui applies them and what is followed here).

// CredKind is a kind of credential a limit is set on.
type CredKind int

// Credential kinds (Maui checks user, group, account, class, QOS; the
// order does not change the answer).
const (
	CredUser CredKind = iota
	CredGroup
	CredAccount
	CredClass
	CredQOS // a job without a QOS is in DEFAULT
	credKinds
)

// LimitKind is what a limit counts over a credential's running jobs.
type LimitKind int

// Limit kinds: MAXJOB (jobs), MAXPROC (processors), MAXPS (processors ×
// remaining walltime, seconds), MAXWC (remaining walltime, seconds).
const (
	LimitJobs LimitKind = iota
	LimitProcs
	LimitPS
	LimitWC
	limitKinds
)

// Limit is one credential's limits: Soft and Hard per LimitKind, 0 for
// none. "MAXJOB=3" sets both to 3, "MAXJOB=2,4" soft 2 and hard 4.
type Limit struct {
	Soft, Hard [limitKinds]int64
}

// Limits are the active usage limits per credential kind and name; the
// "DEFAULT" entry is every credential's without a limit of its own (of
// that kind: Maui picks the credential's own limit when its hard value is
// set, else DEFAULT's).
type Limits struct {
	Cred [credKinds]map[string]Limit
}

// set records a limit value of kind k for credential name of kind c.
func (l *Limits) set(c CredKind, name string, k LimitKind, soft, hard int64) {
	if l.Cred[c] == nil {
		l.Cred[c] = map[string]Limit{}
	}
	v := l.Cred[c][name]
	v.Soft[k], v.Hard[k] = soft, hard
	l.Cred[c][name] = v
}

// softDiffers reports whether any soft limit is below its hard one (then
// Maui's second, hard-limit backfill round can start more).
func (l *Limits) softDiffers() bool {
	for _, m := range l.Cred {
		for _, v := range m {
			if v.Soft != v.Hard {
				return true
			}
		}
	}
	return false
}

// limitLevel is Maui's policy level: soft or hard limits.
type limitLevel int

const (
	levelSoft limitLevel = iota
	levelHard
)

// credUsage is what running jobs use per credential: the counters the
// limits compare with. Each credential a limit applies to (its own or
// DEFAULT's) is interned once, with its counters and its limits resolved
// per kind; a job keeps pointers to its credentials' entries (jobLim.creds),
// so a check reads no map.
type credUsage struct {
	by  [credKinds]map[string]*credLim // nil entry: no limit applies
	all []*credLim
}

// credLim is one credential's usage by running jobs and the limits that
// apply to it, per kind (0: none): its own where its hard value is set,
// else DEFAULT's.
type credLim struct {
	use        [limitKinds]int64
	soft, hard [limitKinds]int64
	set        uint8 // bit k: a limit of kind k applies (soft or hard > 0)
}

// intern returns credential name of kind c's entry, nil when neither it
// nor DEFAULT has a limit of that kind of credential.
func (u *credUsage) intern(l *Limits, c CredKind, name string) *credLim {
	if v, ok := u.by[c][name]; ok {
		return v
	}
	own, hasOwn := l.Cred[c][name]
	def, hasDef := l.Cred[c]["DEFAULT"]
	var v *credLim
	if hasOwn || hasDef {
		v = new(credLim)
		for k := range LimitKind(limitKinds) {
			switch {
			case hasOwn && own.Hard[k] != 0:
				v.soft[k], v.hard[k] = own.Soft[k], own.Hard[k]
			case hasDef && def.Hard[k] != 0:
				v.soft[k], v.hard[k] = def.Soft[k], def.Hard[k]
			}
		}
		for k := range LimitKind(limitKinds) {
			if v.soft[k] > 0 || v.hard[k] > 0 {
				v.set |= 1 << k
			}
		}
		u.all = append(u.all, v)
	}
	if u.by[c] == nil {
		u.by[c] = map[string]*credLim{}
	}
	u.by[c][name] = v
	return v
}

// credsOf is j's credentials' entries, resolved at the first look.
func (u *credUsage) credsOf(l *Limits, j *job) *[credKinds]*credLim {
	if j.lim == nil {
		j.policy().lim = jobLim{sqt: j.Submit}
		j.lim = &j.pol.lim
	}
	if !j.lim.resolved {
		for c := range CredKind(credKinds) {
			j.lim.creds[c] = u.intern(l, c, credName(j, c))
		}
		j.lim.resolved = true
	}
	return &j.lim.creds
}

func credName(j *job, c CredKind) string {
	if c == CredQOS {
		if j.QOS == "" {
			return DefaultQOS
		}
		return j.QOS
	}
	return jobCred(&j.Job, c)
}

// jobUse is what j adds to its credentials' usage with rem seconds of
// walltime left (Maui: the remaining time of a running job, the walltime
// of one about to start).
func jobUse(j *job, rem int64) [limitKinds]int64 {
	return [limitKinds]int64{LimitJobs: 1, LimitProcs: int64(j.Procs), LimitPS: int64(j.Procs) * rem, LimitWC: rem}
}

func (u *credUsage) reset() {
	for _, v := range u.all {
		v.use = [limitKinds]int64{}
	}
}

// add counts j, with rem seconds of walltime left, in its credentials'
// usage.
func (u *credUsage) add(l *Limits, j *job, rem int64) {
	d := jobUse(j, rem)
	for _, v := range u.credsOf(l, j) {
		if v == nil {
			continue
		}
		for k := range d {
			v.use[k] += d[k]
		}
	}
}

// blocks reports whether starting j (its full walltime) would take one of
// its credentials over a limit at level lv: MPolicyCheckLimit, usage +
// the job's own > limit. A credential with no limit of its own (no hard
// value) takes DEFAULT's.
func (l *Limits) blocks(u *credUsage, j *job, lv limitLevel) bool {
	d := jobUse(j, j.Walltime)
	for _, v := range u.credsOf(l, j) {
		if v == nil {
			continue
		}
		lims := &v.hard
		if lv == levelSoft {
			lims = &v.soft
		}
		for m := v.set; m != 0; m &= m - 1 {
			k := bits.TrailingZeros8(m)
			if lim := lims[k]; lim > 0 && d[k]+v.use[k] > lim {
				return true
			}
		}
	}
	return false
}

// blocksBoth is blocks at the hard and at the soft level, in one look.
func (l *Limits) blocksBoth(u *credUsage, j *job) (hard, soft bool) {
	d := jobUse(j, j.Walltime)
	for _, v := range u.credsOf(l, j) {
		if v == nil {
			continue
		}
		for m := v.set; m != 0; m &= m - 1 {
			k := bits.TrailingZeros8(m)
			have := d[k] + v.use[k]
			if lim := v.hard[k]; lim > 0 && have > lim {
				hard = true
			}
			if lim := v.soft[k]; lim > 0 && have > lim {
				soft = true
			}
		}
	}
	return hard, soft
}

package sim

import (
	"math"
	"slices"
)

// Priority is Maui 3.3.1's job priority function (MJobGetStartPriority) as
// far as the simulator models it: the service component (time queued,
// expansion factor), the credential component (user, group, account, QOS
// and class priorities) and the resource component (processors, nodes,
// processor-seconds, walltime), each with its weight and optional cap,
// and the fairshare component (FS, FSUser …, computed by the engine from
// the usage it accrues: fairshare.go). Targets, bypass counts and
// per-user usage are not modelled (ReadMauiConfig says so when a site
// weighs them).
//
// The zero Priority is not Maui's default; NewPriority is.
type Priority struct {
	// Component weights: SERVICEWEIGHT, CREDWEIGHT, RESWEIGHT (Maui's
	// default 1 each).
	Service, Cred, Resource int64
	// Service subcomponents: QUEUETIMEWEIGHT (default 1), XFACTORWEIGHT.
	QueueTime, XFactor int64
	// Credential subcomponents: USERWEIGHT, GROUPWEIGHT, ACCOUNTWEIGHT,
	// QOSWEIGHT, CLASSWEIGHT.
	User, Group, Account, QOS, Class int64
	// Resource subcomponents: PROCWEIGHT, NODEWEIGHT, PSWEIGHT,
	// WALLTIMEWEIGHT and PEWEIGHT (processor equivalents: the processors,
	// as only processors are simulated).
	Proc, Node, PS, Walltime, PE int64
	// Caps (0: none): subcomponent caps QUEUETIMECAP, XFACTORCAP,
	// USERCAP, GROUPCAP, ACCOUNTCAP, QOSCAP, CLASSCAP, PROCCAP, NODECAP,
	// PSCAP, WALLTIMECAP and component caps SERVICECAP, CREDCAP, RESCAP.
	Caps PriorityCaps
	// XFMinWCLimit is XFMINWCLIMIT (default 120 s): the smallest walltime
	// the expansion factor divides by.
	XFMinWCLimit int64
	// Credential priorities (xxxCFG[name] PRIORITY=); the "DEFAULT" entry
	// stands for credentials without a priority of their own (not for
	// QOS).
	UserPrio, GroupPrio, AccountPrio, ClassPrio, QOSPrio map[string]int64
	// QOS service weights (QOSCFG[name] QTWEIGHT= XFWEIGHT=), added to
	// QueueTime and XFactor for that QOS's jobs.
	QOSQTWeight, QOSXFWeight map[string]int64
	// Fairshare weights: FSWEIGHT (the component, Maui's default 1) and
	// FSUSERWEIGHT, FSGROUPWEIGHT, FSACCOUNTWEIGHT, FSQOSWEIGHT,
	// FSCLASSWEIGHT (fairshare.go).
	FS, FSUser, FSGroup, FSAccount, FSQOS, FSClass int64
	// AllowNegative is ENABLENEGJOBPRIORITY or REJECTNEGPRIOJOBS:
	// without either, a priority below 1 counts as 1.
	AllowNegative bool
}

// PriorityCaps are the *CAP parameters (0: no cap).
type PriorityCaps struct {
	QueueTime, XFactor               float64
	User, Group, Account, QOS, Class float64
	Proc, Node, PS, Walltime, PE     float64
	Service, Cred, Resource          float64
	// FSCAP and FSUSERCAP … FSCLASSCAP.
	FS, FSUser, FSGroup, FSAccount, FSQOS, FSClass float64
}

// NewPriority is Maui 3.3.1's default priority function: every component
// weight 1, QUEUETIMEWEIGHT 1, every other weight 0, XFMINWCLIMIT 120 s —
// the priority is the minutes a job has waited.
func NewPriority() *Priority {
	return &Priority{Service: 1, Cred: 1, Resource: 1, FS: 1, QueueTime: 1, XFMinWCLimit: 120}
}

// maxPrio is Maui's MAX_PRIO_VAL.
const maxPrio = 1000000000

// Of is job j's priority in a scheduling pass at time now, the previous
// one having been at prev, as Maui computes and truncates it. Maui counts
// the time a job has waited up to its previous iteration (the effective
// queue duration it records when it selects the job), or up to now for a
// job that came after it.
func (p *Priority) Of(j Job, now, prev int64) int64 {
	return p.ofWaited(j, waitedUpTo(j, now, prev))
}

// waitedUpTo is how long j counts as having waited at a pass at now, the
// previous one at prev (see Of).
func waitedUpTo(j Job, now, prev int64) int64 {
	upTo := now
	if prev > j.Submit {
		upTo = prev
	}
	return max(upTo-j.Submit, 0)
}

// ofWaited is j's priority when it counts as having waited that long.
func (p *Priority) ofWaited(j Job, waitedSecs int64) int64 {
	return p.ofFS(j, waitedSecs, 0)
}

// ofFS is ofWaited with fs, the fairshare component before its weight
// (fsComponent).
func (p *Priority) ofFS(j Job, waitedSecs int64, fs float64) int64 {
	pp := p.parts(&j)
	return p.ofParts(&pp, &j, waitedSecs, fs)
}

// ofJob is ofFS for a simulated job, whose parts that do not change while
// it waits are computed once.
func (p *Priority) ofJob(j *job, waitedSecs int64, fs float64) int64 {
	pp := &j.policy().pp
	if !pp.ok {
		*pp = p.parts(&j.Job)
	}
	if pp.memo && pp.waited == waitedSecs && pp.fs == fs {
		return pp.prio // (under usage limits a blocked job's queue time stands still)
	}
	pp.memo, pp.waited, pp.fs = true, waitedSecs, fs
	pp.prio = p.ofParts(pp, &j.Job, waitedSecs, fs)
	return pp.prio
}

// prioParts are the parts of a job's priority that do not change while it
// waits: the queue-time and expansion-factor weights with its QOS's, and
// the weighted, capped credential and resource components.
type prioParts struct {
	ok        bool
	qt, xf    int64
	cred, res float64
	// the last priority computed, for that queue time and fairshare
	memo   bool
	waited int64
	fs     float64
	prio   int64
}

func (p *Priority) parts(j *Job) prioParts {
	c := &p.Caps
	cred := weighed(p.User, p.UserPrio, j.User, c.User) +
		weighed(p.Group, p.GroupPrio, j.Group, c.Group) +
		weighed(p.Account, p.AccountPrio, j.Account, c.Account) +
		float64(p.QOS)*capped(float64(p.QOSPrio[j.QOS]), c.QOS) +
		weighed(p.Class, p.ClassPrio, j.Queue, c.Class)
	nodes := 0
	if j.PPN > 0 {
		nodes = j.Procs / j.PPN
	}
	wall := j.Walltime
	res := float64(p.Proc)*capped(float64(j.Procs), c.Proc) +
		float64(p.Node)*capped(float64(nodes), c.Node) +
		float64(p.PS)*capped(float64(j.Procs)*float64(wall), c.PS) +
		float64(p.Walltime)*capped(float64(wall), c.Walltime) +
		float64(p.PE)*capped(float64(j.Procs), c.PE)
	return prioParts{ok: true, qt: p.QueueTime + p.QOSQTWeight[j.QOS], xf: p.XFactor + p.QOSXFWeight[j.QOS],
		cred: float64(p.Cred) * capped(cred, c.Cred), res: float64(p.Resource) * capped(res, c.Resource)}
}

// ofParts is the priority from j's parts when it counts as having waited
// waitedSecs, with fairshare component fs: the components in Maui's order
// (service, credential, fairshare, resource), as Maui truncates the sum.
func (p *Priority) ofParts(pp *prioParts, j *Job, waitedSecs int64, fs float64) int64 {
	waited := float64(waitedSecs)
	wall := j.Walltime
	xf := (waited + float64(wall)) / float64(max(p.XFMinWCLimit, wall, 1))
	c := &p.Caps
	serv := float64(pp.qt)*capped(waited/60, c.QueueTime) +
		float64(pp.xf)*capped(xf, c.XFactor)
	prio := float64(p.Service)*capped(serv, c.Service) +
		pp.cred +
		float64(p.FS)*capped(fs, c.FS) +
		pp.res
	if !p.AllowNegative && prio < 1 {
		prio = 1
	}
	prio = math.Min(prio, maxPrio)
	return int64(prio)
}

// weighed is w × a credential's capped priority; with no weight it
// looks nothing up (0 × a finite priority is 0).
func weighed(w int64, m map[string]int64, name string, c float64) float64 {
	if w == 0 {
		return 0
	}
	return float64(w) * capped(credPrio(m, name), c)
}

// credPrio is a credential's priority, or the DEFAULT entry's when it has
// none (or 0) of its own.
func credPrio(m map[string]int64, name string) float64 {
	if v := m[name]; v != 0 {
		return float64(v)
	}
	return float64(m["DEFAULT"])
}

func capped(v, c float64) float64 {
	if c > 0 {
		return math.Min(v, c)
	}
	return v
}

// prioritize orders the queue by the priority function at now, as Maui
// does at every iteration: highest first, equal priorities in the order
// the jobs arrived (Maui's job list order; its sort is stable).
func (e *Engine) prioritize() {
	if e.lim != nil {
		for _, j := range e.queue {
			j.prio = e.prio(j, j.waited(e.now))
		}
	} else {
		for _, j := range e.queue {
			j.prio = e.prio(j, waitedUpTo(j.Job, e.now, e.prevIter))
		}
	}
	slices.SortFunc(e.queue, byPrio)
}

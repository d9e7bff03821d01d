package sim

import "math"

// Fairshare: Maui 3.3.1's fairshare as the simulator follows it
// (docs/simulator.md, "Fairshare"). Usage accrues at every iteration
// (MStatUpdateActiveJobUsage), the current interval's usage counts in
// full and the older ones decayed (MFSCalcFactor), intervals turn at
// every FSINTERVAL counted from the epoch, after the iteration that
// reaches the edge (ServerProcessRequests), and the priority's fairshare
// component compares each credential's share of the usage with its
// FSTARGET (MJobGetStartPriority).

// FSPolicy is Maui's FSPOLICY: what a running job's usage counts.
type FSPolicy int

// Fairshare policies. In a simulation all three count processors ×
// seconds: a task's processor equivalents are its processors, and
// Maui's simulated jobs are 100 % efficient (MJobStart sets the used
// processors to the dedicated ones).
const (
	FSDedicatedPS FSPolicy = iota + 1
	FSDedicatedPES
	FSUtilizedPS
)

// FSMode is an FSTARGET's modifier.
type FSMode int

// Target modifiers: none (a target), '+' a floor (only a share below it
// raises priority), '-' a ceiling (only a share above it lowers it), '^'
// an absolute cap and '%' a relative one (no priority; they block jobs,
// MFSCheckCap).
const (
	FSTargetPlain FSMode = iota
	FSFloor
	FSCeiling
	FSCapAbs
	FSCapRel
)

// FSTarget is one credential's FSTARGET.
type FSTarget struct {
	Value float64
	Mode  FSMode
}

// FSCred is a kind of credential fairshare counts usage for.
type FSCred int

// Fairshare credential kinds, in the order of Maui's subcomponents.
const (
	FSUser FSCred = iota
	FSGroup
	FSAccount
	FSQOS
	FSClass
	fsCreds
)

// maxFSDepth is Maui's MAX_MFSDEPTH: the intervals it keeps.
const maxFSDepth = 24

// Fairshare is a site's fairshare configuration (the weights are in
// Priority: FS, FSUser … FSClass and their caps).
type Fairshare struct {
	Policy FSPolicy
	// Percent is FSPOLICY with a '%' suffix: a credential's factor is
	// 1 − share/target instead of target − share.
	Percent bool
	// Interval is FSINTERVAL (Maui's default 12 h), Depth FSDEPTH
	// (default 8, at most 24), Decay FSDECAY (default 1).
	Interval int64
	Depth    int
	Decay    float64
	// Targets per credential kind and name; "DEFAULT" stands for the
	// credentials without a target of their own.
	Targets [fsCreds]map[string]FSTarget
	// Seed, when set, is the usage an engine starts from (a site's
	// current fairshare state, read by the agent); nil starts at zero.
	Seed *FSState
}

// NewFairshare is Maui's default fairshare configuration with policy p.
func NewFairshare(p FSPolicy) *Fairshare {
	return &Fairshare{Policy: p, Interval: 43200, Depth: 8, Decay: 1}
}

// target is the target that applies to credential name of kind k: its
// own when positive, else DEFAULT's; ok is false when neither is set.
func (f *Fairshare) target(k FSCred, name string) (FSTarget, bool) {
	m := f.Targets[k]
	if t := m[name]; t.Value > 0 && name != "" {
		return t, true
	}
	if t := m["DEFAULT"]; t.Value > 0 {
		return t, true
	}
	return FSTarget{}, false
}

// FSUsage is one credential's usage history: Usage[0] is the current
// interval's (processor-seconds so far), Usage[i] the interval i back.
type FSUsage struct {
	Usage [maxFSDepth]float64
	// factor is the decayed sum of the past intervals (MFSCalcFactor).
	factor float64
	// rate is the processors of the credential's running jobs (what an
	// iteration charges per second since the previous one); at is its
	// place in fsRun.rated plus one (0: not there).
	rate float64
	at   int
}

// share is what the usage counts for now: the current interval in full
// and the past ones decayed.
func (u *FSUsage) share() float64 { return u.Usage[0] + u.factor }

// FSState is the fairshare usage Maui keeps: per credential and the
// total, and the interval it is in (its start, Unix seconds; 0 before
// the first iteration). The agent seeds a forecast with the site's
// (ReadFSFile, ParseDiagnoseF in package maui).
type FSState struct {
	Cred     [fsCreds]map[string]*FSUsage
	Total    FSUsage
	Interval int64
}

// fsRun is the engine's fairshare: the configuration, the usage and
// the previous iteration's time.
type fsRun struct {
	cfg    *Fairshare
	st     FSState
	last   int64
	rolled bool // st.Interval is set (by an iteration or SetFairshare)
	// rated are the usages with running jobs; jobs, each running job's
	// (its credentials' and the total)
	rated []*FSUsage
	jobs  map[*job][fsCreds + 1]*FSUsage
	// caps: some target is a cap (fairshare_cap.go); capped, the jobs the
	// last pass refused, with their frozen queue time
	caps   bool
	capped map[*job]int64
}

// fsInit starts the engine's fairshare at start, from the policy's Seed
// when it has one.
func (e *Engine) fsInit(start int64) {
	cfg := e.policy.Fairshare
	e.fs = &fsRun{cfg: cfg, last: start, jobs: map[*job][fsCreds + 1]*FSUsage{}, capped: map[*job]int64{}}
	for _, m := range cfg.Targets {
		for _, t := range m {
			e.fs.caps = e.fs.caps || t.Mode == FSCapAbs || t.Mode == FSCapRel
		}
	}
	if cfg.Seed != nil {
		e.SetFairshare(*cfg.Seed)
	}
}

// SetFairshare seeds the engine with a site's fairshare usage (its
// current interval and the past ones); without it usage starts at zero.
// It does nothing when the policy has no fairshare.
func (e *Engine) SetFairshare(s FSState) {
	if e.fs == nil {
		return
	}
	e.fs.st = FSState{Total: FSUsage{Usage: s.Total.Usage}, Interval: s.Interval}
	e.fs.rolled = true
	for k, m := range s.Cred {
		for name, u := range m {
			e.fs.usage(FSCred(k), name).Usage = u.Usage
		}
	}
	e.fs.calc()
	e.fs.rated = e.fs.rated[:0]
	clear(e.fs.jobs)
	for _, j := range e.running {
		e.fs.onRun(j)
	}
}

// Fairshare returns a copy of the engine's fairshare usage (the zero
// FSState without fairshare).
func (e *Engine) Fairshare() FSState {
	if e.fs == nil {
		return FSState{}
	}
	e.fsRoll(e.fs.last) // the turn the last iteration made as it ended
	out := FSState{Total: e.fs.st.Total, Interval: e.fs.st.Interval}
	for k, m := range e.fs.st.Cred {
		out.Cred[k] = make(map[string]*FSUsage, len(m))
		for name, u := range m {
			c := *u
			out.Cred[k][name] = &c
		}
	}
	return out
}

func (f *fsRun) usage(k FSCred, name string) *FSUsage {
	m := f.st.Cred[k]
	if m == nil {
		m = map[string]*FSUsage{}
		f.st.Cred[k] = m
	}
	u := m[name]
	if u == nil {
		u = &FSUsage{}
		m[name] = u
	}
	return u
}

// calc recomputes every decayed factor (MFSUpdateData's calc).
func (f *fsRun) calc() {
	f.st.Total.factor = f.factorOf(&f.st.Total)
	for _, m := range f.st.Cred {
		for _, u := range m {
			u.factor = f.factorOf(u)
		}
	}
}

// factorOf is MFSCalcFactor: Σ Usage[i] × Decay^i over the past
// intervals within the depth (i = 1 … Depth−1), summed in that order.
func (f *fsRun) factorOf(u *FSUsage) float64 {
	s := 0.0
	for i := 1; i < f.cfg.Depth && i < maxFSDepth; i++ {
		s += u.Usage[i] * math.Pow(f.cfg.Decay, float64(i))
	}
	return s
}

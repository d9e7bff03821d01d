package demo

import (
	"fmt"
	"math/rand/v2"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
)

// SiteSpec is one simulated cluster of the demo.
type SiteSpec struct {
	Name string
	// Kind is the resource manager the site's agent talks to: KindMaui
	// (Torque/Maui: the agent's Maui-kind adapters, simulated) or
	// KindSlurm (the agent's real Slurm adapter over a simulated Slurm
	// cluster, simsite.SlurmCluster).
	Kind     string
	Trace    string // bundled SWF slice
	Nodes    int
	PPN      int
	Speed    float64
	MemMB    int64
	Features []string
	Base     float64 // owner's price of free time, credits per CPU-hour
}

// Sites are the demo's clusters: different sizes, speeds and prices, each
// running a slice of a real trace from a machine of its size.
// delta is a Slurm-kind site replaying the same SDSC slice as alpha (a
// machine of its size).
var Sites = []SiteSpec{
	{Name: "alpha", Kind: KindMaui, Trace: "sdsc-sp2-days9-10.swf", Nodes: 16, PPN: 8, Speed: 1.0, MemMB: 32000, Features: []string{"ib"}, Base: 1.0},
	{Name: "beta", Kind: KindMaui, Trace: "kth-sp2-days9-10.swf", Nodes: 25, PPN: 4, Speed: 1.5, MemMB: 16000, Base: 2.0},
	{Name: "gamma", Kind: KindMaui, Trace: "hpc2n-days25-26.swf", Nodes: 120, PPN: 2, Speed: 0.8, MemMB: 8000, Base: 0.6},
	{Name: "delta", Kind: KindSlurm, Trace: "sdsc-sp2-days9-10.swf", Nodes: 16, PPN: 8, Speed: 1.2, MemMB: 64000, Base: 0.8},
}

// Site kinds.
const (
	KindMaui  = "torque/maui"
	KindSlurm = "slurm"
)

// kindOf is the kind of the named site ("" when unknown).
func kindOf(site string) string {
	for _, s := range Sites {
		if s.Name == site {
			return s.Kind
		}
	}
	return ""
}

func (s SiteSpec) procs() int { return s.Nodes * s.PPN }

// Pricing is the site's price list: free time at Base, time queued local
// jobs are forecast to hold at 2× base and up with their priority.
func (s SiteSpec) Pricing() forecast.Pricing {
	return forecast.Pricing{Base: s.Base, Default: forecast.Displace{Multiplier: 2, PerPriority: 0.01, Max: 10}}
}

type gridUser struct{ user, account string }

var users = []gridUser{{"alice", "proj1"}, {"bob", "proj2"}, {"carol", "proj3"}}

// demoAccounts are the simulated sites' local accounts: every grid user
// of the demo has one of the same name (uid 1001…), so dispatched parts run
// as their owner.
func demoAccounts(name string) (agent.LocalUser, error) {
	for i, u := range users {
		if u.user == name {
			return agent.LocalUser{Name: name, UID: 1001 + i, Home: "/home/" + name}, nil
		}
	}
	return agent.LocalUser{}, fmt.Errorf("no local user %q", name)
}

// Budgets of the demo's accounts: carol's proj3 is small, so one of her
// big jobs is refused as over budget.
var demoBudgets = map[string]float64{"proj1": 200000, "proj2": 200000, "proj3": 8000}

// GridJob is one submission of the demo's stream: the job and when (after
// the demo's start, simulated) it is submitted. Script, when set, makes
// the broker dispatch the job's parts itself (the simulated sites read its
// #lookahead-sim lines, see agent/simsite).
type GridJob struct {
	At     time.Duration
	Job    forecast.JobRequest
	Script []byte
}

// gridJobs generates n grid jobs submitted over window (simulated),
// deterministic for a seed. Every fourth job is wider than any one site
// (only a co-allocation across two sites can run it).
func gridJobs(n int, window time.Duration, seed uint64, widest int) []GridJob {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	sizes := []int{8, 16, 32, 48, 64, 96, 128, 160}
	walls := []time.Duration{30 * time.Minute, time.Hour, 90 * time.Minute, 2 * time.Hour, 3 * time.Hour}
	prices := []float64{1.5, 2, 2.5, 3, 4}
	out := make([]GridJob, n)
	for i := range out {
		u := users[rng.IntN(len(users))]
		j := forecast.JobRequest{
			Procs: sizes[rng.IntN(len(sizes))], Walltime: int64(walls[rng.IntN(len(walls))] / time.Second),
			MaxPrice: prices[rng.IntN(len(prices))], User: u.user, Account: u.account, Criterion: forecast.EarliestStart,
		}
		switch {
		case i%4 == 3:
			// only fits across sites; pays enough to displace queued local work
			j.Procs, j.Walltime, j.MaxPrice = widest+8+8*rng.IntN(4), 3600, 4.5
		case i%5 == 1:
			j.Criterion = forecast.EarliestFinish
		case i%7 == 2:
			j.MaxSites = 1
		}
		if i == n/2 { // carol's big job: over her account's budget
			j.User, j.Account, j.Procs, j.Walltime, j.MaxPrice = "carol", "proj3", 300, 8*3600, 4
		}
		at := time.Duration(float64(window) * float64(i) / float64(n))
		out[i] = GridJob{At: at, Job: j, Script: scriptFor(i, j)}
	}
	return out
}

// scriptFor gives every third job, and every job only a co-allocation can
// run, a script the broker dispatches: it runs its whole walltime and
// exits 0. (Parts that end early release their reservations early; local
// jobs backfill the freed processors between two forecasts, and the
// broker's next commits into them roll back as stale: measured over seeds
// 3 and 4, ending at 70 % of the walltime placed 18–19 jobs with 4
// rollbacks, the whole walltime 23 with 1.) The first cross-site job (i = 3) fails: its part on alpha exits
// 3 after 10 min, on beta after 15 min, on delta after 20 min, so
// whichever two sites it spans,
// one part fails while the other still runs and is deleted. Other jobs'
// parts are reported by the demo's launcher.
func scriptFor(i int, j forecast.JobRequest) []byte {
	switch {
	case i == 3:
		return []byte(failingScript)
	case i%3 == 0 || i%4 == 3:
		return []byte(okScript)
	}
	return nil
}

// okScript runs for the part's walltime and exits 0.
const okScript = `#!/bin/sh
#lookahead-sim exit=0
exec ./simulate --steps 1000
`

// failingScript is the demo's failing job: see scriptFor.
const failingScript = `#!/bin/sh
#lookahead-sim runtime=50m
#lookahead-sim site=alpha runtime=10m exit=3
#lookahead-sim site=beta runtime=15m exit=3
#lookahead-sim site=delta runtime=20m exit=3
exec ./simulate --steps 1000
`

// describe is a one-line rendering of a job request.
func describe(j forecast.JobRequest) string {
	s := fmt.Sprintf("%d procs × %s ≤%.4g cr/CPU-h (%s/%s)", j.Procs, simDur(j.Walltime), j.MaxPrice, j.User, j.Account)
	if j.MaxSites == 1 {
		s += " one site"
	}
	if j.Criterion == forecast.EarliestFinish {
		s += " earliest-finish"
	}
	return s
}

// simDur renders simulated seconds as 1h30, 45m, 20s.
func simDur(s int64) string {
	switch {
	case s >= 3600:
		if s%3600/60 == 0 {
			return fmt.Sprintf("%dh", s/3600)
		}
		return fmt.Sprintf("%dh%02d", s/3600, s%3600/60)
	case s >= 60:
		return fmt.Sprintf("%dm", s/60)
	}
	return fmt.Sprintf("%ds", s)
}

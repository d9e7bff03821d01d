package wan

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// other is the site of alpha and beta that is not s.
func other(s string) string {
	if s == "alpha" {
		return "beta"
	}
	return "alpha"
}

// partEnded reports whether the part of job on site has ended in the
// simulated cluster.
func (g *grid) partEnded(site, job string) bool {
	jobs, _, err := g.sites[site].ss.Jobs(context.Background())
	if err != nil {
		g.t.Fatal(err)
	}
	for _, j := range jobs {
		if strings.Contains(j.Name, job) && j.Done() {
			return true
		}
	}
	return false
}

// siteEvents counts job's events in the job stream that site reported
// in state.
func (g *grid) siteEvents(job, site, state string) int {
	n := 0
	for _, e := range g.jobEvents(job) {
		if e.Kind == broker.EvSite && e.Site == site && e.State == state {
			n++
		}
	}
	return n
}

// TestSiteCutLongerThanTheTTL: a site whose leaf link is cut for longer
// than the broker's site TTL leaves planning and gets no new job; its
// agent keeps the reservations it holds and its running part; a job
// cancelled meanwhile is released at once on the other site and owes the
// cut one a release. When the link returns, the owed release is
// delivered, the part that ended during the cut is reported (once), and
// the invariants hold with a clean audit.
func TestSiteCutLongerThanTheTTL(t *testing.T) {
	g := newGrid(t, gridOptions{})
	both := g.submit(forecast.JobRequest{Procs: 10, Walltime: 1800}, "")
	g.waitState(both, wire.JobReserved)
	runs := g.submit(forecast.JobRequest{Procs: 4, Walltime: 300, MaxSites: 1}, "#!/bin/sh\n#lookahead-sim runtime=8s\n")
	st := g.waitState(runs, wire.JobRunning)
	cut := st.Plan.Sites()[0]
	kept := other(cut)
	t.Logf("%s runs on %s; cutting %s's link", runs, cut, cut)

	g.net.Site(cut).Link.Cut()
	g.waitFor(cut+" stale at the broker", func() bool { return g.sitesState()[cut].Stale })
	g.cancel(both)
	g.waitFor(kept+" releases "+both, func() bool { return !g.holds(kept, both) })
	if !g.holds(cut, both) {
		t.Fatalf("%s's agent dropped %s's reservation while cut off", cut, both)
	}
	next := g.submit(forecast.JobRequest{Procs: 4, Walltime: 1800}, "")
	if st := g.waitState(next, wire.JobReserved); !slices.Equal(st.Plan.Sites(), []string{kept}) {
		t.Fatalf("%s reserved on %v while %s is cut off", next, st.Plan.Sites(), cut)
	}
	if g.holds(cut, next) {
		t.Fatalf("%s holds %s, planned while it was cut off", cut, next)
	}
	g.waitFor(runs+"'s part to end on "+cut, func() bool { return g.partEnded(cut, runs) })
	if st, _ := g.job(runs); st.State != wire.JobRunning {
		t.Fatalf("%s is %s while its site could not report it", runs, st.State)
	}

	g.net.Site(cut).Link.Heal()
	g.waitFresh(cut)
	g.waitState(runs, wire.JobFinished)
	g.waitFor("the release of "+both+" delivered to "+cut, func() bool { return !g.holds(cut, both) })
	if n := g.siteEvents(runs, cut, broker.SiteFinished); n != 1 {
		t.Errorf("%s's end on %s recorded %d times, want once", runs, cut, n)
	}
	logs := g.sites[cut].logs.String()
	for _, want := range []string{"the grid does not answer", "the grid answers again"} {
		if !strings.Contains(logs, want) {
			t.Errorf("%s's agent never logged %q", cut, want)
		}
	}
	g.check("a cut longer than the site TTL")
}

// TestLinkFaultDuringACommit: the link of one site of a two-site job is
// cut, then (for another job) stalled, right after the broker recorded
// the commit's intent. The cut site never gets the reserve (no
// responders); the stalled one gets it after the broker gave up, reserves,
// and releases on the release owed to it. Either way the other site's
// reservation is released while the link is down — no half-reserved job
// — and once the link is back the job is reserved on both, the
// invariants hold and the audit is clean.
func TestLinkFaultDuringACommit(t *testing.T) {
	var armed atomic.Value // func(): the fault to inject at the next intent
	armed.Store(func() {})
	var hit atomic.Bool
	g := newGrid(t, gridOptions{failPoint: func(p string) bool {
		if p == "intent" && hit.CompareAndSwap(false, true) {
			armed.Load().(func())()
		}
		return false
	}})
	link := g.net.Site("alpha").Link
	for _, fault := range []struct {
		name       string
		down, back func()
	}{
		{"a cut", link.Cut, link.Heal},
		{"a stall", link.Stall, link.Resume},
	} {
		armed.Store(fault.down)
		hit.Store(false)
		job := g.submit(forecast.JobRequest{Procs: 10, Walltime: 1800}, "")
		g.waitFor("the commit of "+job+" rolled back", func() bool {
			st, ok := g.job(job)
			return hit.Load() && ok && st.State == wire.JobWaiting && st.Attempts > 0 && slices.Contains(st.Releasing, "alpha")
		})
		g.waitFor("beta to release "+job, func() bool { return !g.holds("beta", job) })
		t.Logf("%s: %s rolled back, beta released it; the link comes back", fault.name, job)
		fault.back()
		g.waitState(job, wire.JobReserved)
		g.check(fault.name + " during a commit")
		g.cancel(job)
		g.settled()
	}
}

// TestAgentStartsWhileItsLinkIsDown: an agent started while its leaf
// node's link to the grid is cut does not exit: it waits for the grid's
// JetStream, and once the link is back it binds, publishes, and its site
// is planned on (a job needing both sites is reserved).
func TestAgentStartsWhileItsLinkIsDown(t *testing.T) {
	g := newGrid(t, gridOptions{noAgents: true})
	g.startAgent("alpha")
	g.waitFresh("alpha")
	beta := g.net.Site("beta")
	beta.Link.Cut()
	g.waitFor("beta's leaf link down", func() bool { return beta.LeafLinks() == 0 })
	g.startAgent("beta")
	g.waitFor("beta's agent to wait for the grid", func() bool {
		return strings.Contains(g.sites["beta"].logs.String(), "the grid's JetStream is not reachable; trying again")
	})
	select {
	case err := <-g.sites["beta"].done:
		t.Fatalf("beta's agent exited while its link was down: %v", err)
	default:
	}
	beta.Link.Heal()
	g.waitFresh("beta")
	job := g.submit(forecast.JobRequest{Procs: 10, Walltime: 1800}, "")
	g.waitState(job, wire.JobReserved)
	g.check("an agent started while its link was down")
}

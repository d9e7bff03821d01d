package wan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"lookahead/forecast"
	"lookahead/wire"
)

// TestSoak runs LOOKAHEADTEST_WAN_SOAK rounds (the figures in
// docs/operations.md come from 30) of faults on the leaf links of a grid
// of three sites while jobs come and go: each round sets a random
// latency (0–150 ms each way) on every link, submits a one-site, a
// two-site and a dispatched job, and does one of — cut a site's link past
// the site TTL; stall one for 3 s; cut or stall one at the next commit's
// intent — then heals, waits until every site is planned on again and
// the grid settles, checks the invariants, and cancels what is left. It
// reports how long the grid took to recover after each kind of fault.
func TestSoak(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("LOOKAHEADTEST_WAN_SOAK"))
	if rounds <= 0 {
		t.Skip("set LOOKAHEADTEST_WAN_SOAK=30 to run it")
	}
	var armed atomic.Value
	armed.Store(func() {})
	var hit atomic.Bool
	hit.Store(true)
	sites := []string{"alpha", "beta", "gamma"}
	// a reserve timeout for round trips of up to 300 ms on a loaded machine
	g := newGrid(t, gridOptions{sites: sites, reserveTimeout: 10 * time.Second, failPoint: func(p string) bool {
		if p == "intent" && hit.CompareAndSwap(false, true) {
			armed.Load().(func())()
		}
		return false
	}})
	rng := rand.New(rand.NewPCG(39, uint64(rounds)))
	recovery := map[string][]time.Duration{}
	for i := range rounds {
		for _, s := range sites {
			g.net.Site(s).Link.SetLatency(time.Duration(rng.IntN(151)) * time.Millisecond)
		}
		site := sites[rng.IntN(len(sites))]
		link := g.net.Site(site).Link
		kind := []string{"cut past the TTL", "stall 3 s", "cut at intent", "stall at intent"}[rng.IntN(4)]
		switch kind {
		case "cut at intent":
			armed.Store(link.Cut)
			hit.Store(false)
		case "stall at intent":
			armed.Store(link.Stall)
			hit.Store(false)
		}
		g.submit(forecast.JobRequest{Procs: 4, Walltime: 1800, MaxSites: 1}, "")
		g.submit(forecast.JobRequest{Procs: 10, Walltime: 1800}, "")
		g.submit(forecast.JobRequest{Procs: 2, Walltime: 600}, "#!/bin/sh\n#lookahead-sim runtime=3s\n")
		switch kind {
		case "cut past the TTL":
			link.Cut()
			g.waitFor(site+" stale", func() bool { return g.sitesState()[site].Stale })
		case "stall 3 s":
			link.Stall()
			time.Sleep(3 * time.Second) // a stall has no event to wait for: it is one
		default:
			g.waitFor("the armed fault", hit.Load)
		}
		healed := time.Now()
		link.Heal()
		link.Resume()
		g.waitFresh(sites...)
		g.settled()
		recovery[kind] = append(recovery[kind], time.Since(healed))
		g.check(fmt.Sprintf("round %d, %s on %s", i+1, kind, site))
		g.cancelAll()
	}
	for kind, ds := range recovery {
		var sum, worst time.Duration
		for _, d := range ds {
			sum += d
			worst = max(worst, d)
		}
		t.Logf("%-17s %2d rounds: back in planning and settled %v after the link returned (mean), %v at most",
			kind, len(ds), (sum / time.Duration(len(ds))).Round(10*time.Millisecond), worst.Round(10*time.Millisecond))
	}
}

// cancelAll cancels every job still waiting or holding, and waits for the
// releases.
func (g *grid) cancelAll() {
	g.t.Helper()
	for _, j := range g.settled().Jobs {
		switch j.State {
		case wire.JobWaiting, wire.JobReserved, wire.JobDispatched, wire.JobRunning:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			rep, err := g.op.Cancel(ctx, j.Job.ID)
			cancel()
			if err != nil || (rep.Code != wire.CodeOK && !ended(rep.State)) {
				g.t.Fatalf("cancel %s: %+v %v", j.Job.ID, rep, err) // (a part may have ended meanwhile)
			}
		}
	}
	g.settled()
}

// ended: the job reached a final state (a part can end, and the job with
// it, between a status and a cancel).
func ended(state string) bool {
	switch state {
	case wire.JobFinished, wire.JobFailed, wire.JobCancelled, wire.JobExpired:
		return true
	}
	return false
}

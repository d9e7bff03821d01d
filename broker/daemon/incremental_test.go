package daemon

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/wire"
)

// staggered is a forecast of nodes whose free time starts one after the
// other (node i from now + i × step), so that plans start at different
// instants and time passing moves only some of them.
func (e *env) staggered(site string, seq uint64, nodes, procs int, step int64) forecast.Forecast {
	now := e.clock.Now().Unix()
	f := forecast.Forecast{Version: 1, Site: site, Seq: seq, Generated: now, Horizon: now + 86400}
	for i := range nodes {
		name := fmt.Sprintf("%s%02d", site, i)
		f.Nodes = append(f.Nodes, forecast.Node{Name: name, Procs: procs, Speed: 1, MemMB: 1000})
		f.Slots = append(f.Slots, forecast.Slot{Node: name, Procs: procs, Start: now + int64(i)*step, End: f.Horizon, Price: 1})
	}
	return f
}

// TestBrokerPlansAsFromScratch drives a broker through submissions,
// commits (to sites that reserve), a cancel, a forecast revision and time
// passing, with a planner that checks every cycle's incremental answers
// against planning the same input from scratch.
func TestBrokerPlansAsFromScratch(t *testing.T) {
	e := newEnv(t)
	var r *brokerRun
	fcs := map[string]forecast.Forecast{}
	for _, s := range []string{"alpha", "beta"} {
		e.startSite(s)
		fcs[s] = e.staggered(s, 1, 6, 8, 1800)
		e.putForecast(s, fcs[s])
	}
	// refresh republishes every forecast as a new revision generated now,
	// with the same slots (they stay fresh while the clock moves on)
	refresh := func() {
		t.Helper()
		for s, f := range fcs {
			f.Seq++
			f.Generated = e.clock.Now().Unix()
			fcs[s] = f
			e.putForecast(s, f)
			waitSite(t, r.b, s, func(st wire.SiteStatus) bool { return st.Seq == f.Seq })
		}
	}
	pl := NewPlanner(PlannerOptions{})
	var mu sync.Mutex
	var total coalloc.Stats
	var bad []string
	checked := func(fcs []forecast.Forecast, jobs []forecast.JobRequest, nb int64) ([]forecast.Allocation, error) {
		got, err := pl.Plan(fcs, jobs, nb)
		want, err2 := eachPlanner(fcs, jobs, nb)
		st := pl.TakeStats()
		mu.Lock()
		defer mu.Unlock()
		total.Jobs, total.Reused = total.Jobs+st.Jobs, total.Reused+st.Reused
		if err != nil || err2 != nil || !reflect.DeepEqual(got, want) {
			bad = append(bad, fmt.Sprintf("at %d: incremental %+v (%v)\nfrom scratch %+v (%v)", nb, got, err, want, err2))
		}
		return got, err
	}
	r = e.startBroker(func(c *Config) { c.Planner = checked })
	e.waitSites(r.b, 2)
	ctx := context.Background()
	cycle := func() {
		t.Helper()
		if err := r.b.Cycle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	// The last job asks less than any slot's price: it never fits (a size
	// no site could hold is refused at admission).
	for i, procs := range []int{8, 16, 24, 8, 64, 8} {
		price := 2.0
		if i == 5 {
			price = 0.5
		}
		rep := submit(t, r.b, fmt.Sprintf("inc-%d", i), job(procs, 3600*int64(1+i%3), price))
		if rep.Code != wire.CodeOK {
			t.Fatalf("submit: %+v", rep)
		}
		ids = append(ids, rep.Job)
	}
	cycle()
	cycle() // nothing changed
	e.clock.Add(20 * time.Minute)
	refresh()
	cycle() // time passed: jobs due within the commit lead are reserved
	if rep := r.b.Cancel(ctx, "alice", ids[3]); rep.Code != wire.CodeOK && rep.Code != wire.CodeNotFound {
		t.Logf("cancel: %+v", rep)
	}
	cycle()
	alpha := e.staggered("alpha", fcs["alpha"].Seq+1, 6, 8, 900)
	fcs["alpha"] = alpha
	e.putForecast("alpha", alpha)
	waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return s.Seq == alpha.Seq })
	cycle()
	for range 3 {
		e.clock.Add(time.Hour)
		refresh()
		cycle()
		cycle()
	}
	mu.Lock()
	defer mu.Unlock()
	for _, b := range bad {
		t.Error(b)
	}
	if total.Reused == 0 {
		t.Fatalf("no answer was reused: %+v", total)
	}
	states := map[string]int{}
	for _, j := range r.b.Status(wire.StatusRequest{All: true}).Jobs {
		states[j.State]++
	}
	t.Logf("%+v; jobs by state %v", total, states)
	if states[wire.JobWaiting] == len(ids) {
		t.Fatalf("nothing was committed: %v", states)
	}
}

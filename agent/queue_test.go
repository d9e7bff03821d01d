package agent_test

import (
	"context"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/forecast"
	"lookahead/forecast/sim"
)

// TestStatusListsQueuedJobsWithPredictedStarts (issue 38): the status
// lists each local job waiting in the queue with the start the forecast
// predicts for it and the first prediction made, so an admin can check the
// forecast job by job against the scheduler. On 4×4 processors job 1 (8
// procs, 1 h) runs from t0 and job 2 (16 procs) waits for it: predicted at
// t0+1h from the first forecast on.
func TestStatusListsQueuedJobsWithPredictedStarts(t *testing.T) {
	c := newClock(t0)
	site, err := simsite.New(simsite.Config{Site: "a", Nodes: 4, PPN: 4, Policy: sim.EASY, Workload: smallWorkload(), Start: t0, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Site: "a"}, agent.Deps{Snapshotter: site, Now: c.Now,
		Engine: agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, now := range []int64{t0, t0 + 60} {
		c.Set(now)
		if _, err := a.BuildOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		st := a.Status()
		if st.QueueTotal != 1 || len(st.Queue) != 1 {
			t.Fatalf("at %d: queue %+v (total %d), want job 2 waiting", now-t0, st.Queue, st.QueueTotal)
		}
		q := st.Queue[0]
		if q.Procs != 16 || q.Walltime != 7200 || q.Start != t0+3600 || q.End != t0+3600+7200 || q.FirstStart != t0+3600 {
			t.Errorf("at %d: %+v, want 16 procs predicted [t0+1h, t0+3h), first predicted t0+1h", now-t0, q)
		}
	}
}

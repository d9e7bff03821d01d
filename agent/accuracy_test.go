package agent_test

import (
	"context"
	"os"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/forecast/swf"
)

// The start-time accuracy of the built-in forecast on a real workload:
// the first 200 jobs of the KTH-SP2 trace run on a simulated 100-processor
// site (EASY, jobs end at their real run time); the agent forecasts every
// 2 simulated minutes assuming full walltimes, and scores each queued
// job's first predicted start against its real start.
func TestForecastAccuracyOnKTHSlice(t *testing.T) {
	fh, err := os.Open("testdata/KTH-SP2-1996-2.1-cln.head200.swf")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	tr, err := swf.Read(fh, 0)
	if err != nil {
		t.Fatal(err)
	}
	jobs := tr.SimJobs()
	first := jobs[0].Submit
	for i := range jobs {
		jobs[i].Submit -= first
	}
	c := newClock(t0)
	site, err := simsite.New(simsite.Config{Site: "kth", Nodes: 100, PPN: 1, Policy: sim.EASY, Workload: jobs, Start: t0, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Site: "kth"}, agent.Deps{Snapshotter: site, Now: c.Now,
		Engine: agent.BuiltinEngine{Horizon: 72 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		t.Fatal(err)
	}
	end := t0 + jobs[len(jobs)-1].Submit + 48*3600
	for now := t0; now <= end; now += 120 {
		c.Set(now)
		if _, err := a.BuildOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	acc := a.Status().Accuracy
	total := 0
	for _, n := range acc.Buckets {
		total += n
	}
	if acc.Checked < 20 || total != acc.Checked || acc.Early+acc.Late > acc.Checked {
		t.Fatalf("accuracy %+v", acc)
	}
	t.Logf("KTH-SP2 first 200 jobs, 100 procs, EASY, forecast every 120 s: %d queued jobs scored, %d early, %d late, "+
		"mean |error| first prediction %.0f s, last prediction %.0f s, max %d s; histogram %v over bounds %v s",
		acc.Checked, acc.Early, acc.Late, acc.MeanAbsFirst, acc.MeanAbsLast, acc.MaxAbsFirst, acc.Buckets, acc.BucketBounds)
}

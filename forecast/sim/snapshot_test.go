package sim

import (
	"testing"

	"lookahead/forecast"
)

// The engine's snapshot is what Build takes: forecasting from it predicts
// the schedule the engine itself then runs when every job uses its full
// walltime.
func TestSnapshotThenBuildAgrees(t *testing.T) {
	c := UniformCluster(4, 4)
	c.Site = "s1"
	const t0 = 1000 // Started 0 means "not started" in a snapshot
	e := NewEngine(c, EASY, t0)
	jobs := []Job{
		{ID: "a", Procs: 8, Walltime: 100, Runtime: -1, Submit: t0},
		{ID: "b", Procs: 12, Walltime: 50, Runtime: -1, Submit: t0 + 1},
		{ID: "c", Procs: 4, Walltime: 30, Runtime: -1, Submit: t0 + 2},
		{ID: "d", Procs: 16, Walltime: 20, Runtime: -1, Submit: t0 + 3},
		{ID: "e", Procs: 2, Walltime: 500, Runtime: -1, Submit: t0 + 4},
	}
	for _, j := range jobs {
		e.Submit(j)
	}
	e.AdvanceTo(t0 + 10)
	snap := e.Snapshot()
	if snap.Site != "s1" || snap.Taken != t0+10 || len(snap.Nodes) != 4 {
		t.Fatalf("snapshot header %+v", snap)
	}
	running, queued := 0, 0
	for _, j := range snap.Jobs {
		switch {
		case j.Running():
			running++
			if len(j.Hosts) == 0 || j.Started > t0+10 {
				t.Errorf("running job %+v without hosts or start", j)
			}
		case j.Waiting():
			queued++
		}
	}
	if running+queued != len(jobs) {
		t.Fatalf("snapshot has %d running + %d queued jobs, want %d", running, queued, len(jobs))
	}
	_, preds, err := Build(snap, t0+10, t0+10_000, EASY, forecast.DefaultPricing())
	if err != nil {
		t.Fatal(err)
	}
	predicted := map[string]int64{}
	for _, p := range preds {
		predicted[p.Job] = p.Start
	}
	for _, ev := range e.AdvanceTo(t0 + 10_000) {
		if ev.Kind == Started && predicted[ev.Job] != ev.Start {
			t.Errorf("%s started at %d, forecast said %d", ev.Job, ev.Start, predicted[ev.Job])
		}
	}
}

package agent

import (
	"fmt"
	"testing"

	"lookahead/forecast"
)

// queueOf: waiting jobs only (not a part waiting in its reservation), soonest predicted start first, those beyond
// the horizon last by submission, at most MaxStatusQueue with the total.
func TestQueueOfOrderAndBound(t *testing.T) {
	snap := forecast.Snapshot{Jobs: []forecast.LocalJob{
		{ID: "r", State: forecast.JobRunning, Procs: 1},
		{ID: "late", State: forecast.JobQueued, Procs: 2, Submitted: 5},
		{ID: "never", State: forecast.JobQueued, Procs: 3, Submitted: 1},
		{ID: "soon", State: forecast.JobQueued, Procs: 4, Submitted: 9},
		{ID: "held", State: forecast.JobHeld, Procs: 5},
		// A grid part waiting in its reservation: not simulated, not listed.
		{ID: "part", State: forecast.JobQueued, Procs: 7, Submitted: 2, Reservation: "la.g1"},
	}, Reservations: []forecast.Reservation{{ID: "la.g1", Job: "g1", Start: 100, End: 700}}}
	preds := []forecast.Prediction{{Job: "r", Start: 1}, {Job: "late", Start: 500, End: 600}, {Job: "soon", Start: 100, End: 200}}
	q, total := queueOf(snap, preds, func(job string) int64 { return map[string]int64{"late": 400}[job] })
	got := ""
	for _, j := range q {
		got += fmt.Sprintf("%s:%d:%d ", j.Job, j.Start, j.FirstStart)
	}
	if total != 3 || got != "soon:100:0 late:500:400 never:0:0 " {
		t.Fatalf("queue %q (total %d)", got, total)
	}
	var many forecast.Snapshot
	for i := range MaxStatusQueue + 5 {
		many.Jobs = append(many.Jobs, forecast.LocalJob{ID: fmt.Sprint(i), State: forecast.JobQueued, Procs: 1})
	}
	if q, total := queueOf(many, nil, func(string) int64 { return 0 }); len(q) != MaxStatusQueue || total != MaxStatusQueue+5 {
		t.Fatalf("%d listed of %d", len(q), total)
	}
}

package sim

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// Issue 23.6: a long replay could not be stopped (Ctrl-C); it stops
// between simulated instants once its context ends.
func TestRunContextStops(t *testing.T) {
	var jobs []Job
	for i := range 20_000 {
		jobs = append(jobs, Job{ID: fmt.Sprint(i), Procs: 1, Walltime: 10, Runtime: 10, Submit: int64(i)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	last := 0
	o := Options{Progress: func(done, _ int) {
		last = done
		if done >= 2000 {
			cancel()
		}
	}}
	_, err := RunContext(ctx, PoolCluster(1), jobs, FCFS, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("replay after cancel: %v, want context.Canceled", err)
	}
	if last >= len(jobs) {
		t.Fatalf("the replay ran to the end (%d jobs) after its context ended", last)
	}
}

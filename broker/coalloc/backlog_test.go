package coalloc

import (
	"strings"
	"testing"

	"lookahead/forecast"
)

// splitGrid: site a (16 processors) is free from 2000; sites b and c (8
// each) are free now. A 12-processor job of walltime 1000 fits one site
// only at a (2000–3000), or b and c from 0, running factor × 1000. Local
// jobs are forecast to hold b's node for held seconds from 10,000 (price
// 2, the owner's free price is 1): held × 8 processor-seconds of queued
// local work on a grid of 32 processors.
func splitGrid(held int64) []forecast.Forecast {
	free := func(f forecast.Forecast) forecast.Forecast { f.FreePrice = 1; return f }
	b := []forecast.Slot{sl("b1", 8, 0, 10_000, 1), sl("b1", 8, 10_000+held, 1<<30, 1)}
	if held > 0 {
		b = append(b, sl("b1", 8, 10_000, 10_000+held, 2))
	}
	return []forecast.Forecast{
		free(mkSite("a", []forecast.Node{nd("a1", 16, 1)}, sl("a1", 16, 2000, 1<<30, 1))),
		free(mkSite("b", []forecast.Node{nd("b1", 8, 1)}, b...)),
		free(mkSite("c", []forecast.Node{nd("c1", 8, 1)}, sl("c1", 8, 0, 1<<30, 1))),
	}
}

// TestSplitWindowWeighsWasteAgainstBacklog: a split at factor 1.5 wastes
// half the job's area; with a backlog of 3000 s (96,000 processor-seconds
// held by local jobs over 32 processors) the split window is 0.5 × 3000
// = 1500 s, so one site finishing at 3000 (1500 s after the split's 1500)
// wins; with half that backlog, no factor, no backlog or the window off,
// the split finishes first and least-held's tolerance (0.5 × 1000 s)
// keeps it. The grid queue's work counts in the backlog too.
func TestSplitWindowWeighsWasteAgainstBacklog(t *testing.T) {
	job := jb("g", 12, 1000, 3)
	later := submittedAt(jb("h", 8, 6000, 3), 1) // 48,000 processor-seconds queued behind g
	for _, tc := range []struct {
		name   string
		held   int64
		factor float64
		split  float64
		queue  []forecast.JobRequest
		want   string
	}{
		{"backlog 3000 s, factor 1.5: one site", 12_000, 1.5, 1, nil, "a/a1:12"},
		{"backlog 1500 s: the split", 6_000, 1.5, 1, nil, "b/b1:8 c/c1:4"},
		{"backlog 1500 s and the grid queue's 1500 s: one site", 6_000, 1.5, 1, []forecast.JobRequest{later}, "a/a1:12"},
		{"twice the window on backlog 1500 s: one site", 6_000, 1.5, 2, nil, "a/a1:12"},
		{"no multi-site factor: the split", 12_000, 1, 1, nil, "b/b1:8 c/c1:4"},
		{"no backlog: the split", 0, 1.5, 1, nil, "b/b1:8 c/c1:4"},
		{"split window off: the split", 12_000, 1.5, 0, nil, "b/b1:8 c/c1:4"},
	} {
		for _, crit := range []string{forecast.FreeFirst, forecast.LeastHeld} {
			t.Run(tc.name+"/"+crit, func(t *testing.T) {
				opts := Options{MultiSiteFactor: tc.factor, Tolerance: DefaultTolerance, FreeTolerance: DefaultFreeTolerance, SplitBacklog: tc.split}
				jobs := append([]forecast.JobRequest{withCrit(job, crit)}, tc.queue...)
				out, err := PlanQueue(splitGrid(tc.held), jobs, opts)
				if err != nil {
					t.Fatal(err)
				}
				each, err := PlanEach(splitGrid(tc.held), jobs, opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := partsOf(out[0]); got != tc.want || partsOf(each[0]) != got {
					t.Fatalf("g placed on %q (PlanEach: %q) from %d, want %q; why: %s", got, partsOf(each[0]), out[0].Start, tc.want, out[0].Why)
				}
				if tc.want == "a/a1:12" && !strings.Contains(out[0].Why, "split window") {
					t.Errorf("why does not name the split window: %s", out[0].Why)
				}
			})
		}
	}
}

func TestSplitBacklogValidated(t *testing.T) {
	for _, b := range []float64{-1, 101} {
		if err := (Options{SplitBacklog: b}).Validate(); err == nil {
			t.Errorf("split backlog %v accepted", b)
		}
	}
}

package coalloc

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"lookahead/broker/brokertest"
	"lookahead/forecast"
)

// TestSplitWindowWeighsWasteAgainstBacklog: a split at factor 1.5 wastes
// half the job's area; with a backlog of 3375 s (96,000 processor-seconds
// held by local jobs and g's own 12,000, over 32 processors) the split
// window is 0.5 × 3375 s, so one site finishing at 3000 (1500 s after the
// split's 1500) wins; with 1875 s of backlog (a window of 937 s), no
// factor, no backlog or the window off, the split finishes first and
// least-held's tolerance (0.5 × 1000 s) keeps it. Other grid jobs queued
// count in the backlog too.
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
		{"backlog 3375 s, factor 1.5: one site", 12_000, 1.5, 1, nil, "a/a1:12"},
		{"backlog 1875 s: the split", 6_000, 1.5, 1, nil, "b/b1:8 c/c1:4"},
		{"backlog 1875 s and another grid job's 1500 s: one site", 6_000, 1.5, 1, []forecast.JobRequest{later}, "a/a1:12"},
		{"twice the window on backlog 1875 s: one site", 6_000, 1.5, 2, nil, "a/a1:12"},
		{"no multi-site factor: the split", 12_000, 1, 1, nil, "b/b1:8 c/c1:4"},
		{"no local backlog: the split", 0, 1.5, 1, nil, "b/b1:8 c/c1:4"},
		{"split window off: the split", 12_000, 1.5, 0, nil, "b/b1:8 c/c1:4"},
	} {
		for _, crit := range []string{forecast.FreeFirst, forecast.LeastHeld} {
			t.Run(tc.name+"/"+crit, func(t *testing.T) {
				opts := Options{MultiSiteFactor: tc.factor, Tolerance: DefaultTolerance, FreeTolerance: DefaultFreeTolerance, SplitBacklog: tc.split}
				jobs := append([]forecast.JobRequest{withCrit(job, crit)}, tc.queue...)
				out, err := PlanQueue(brokertest.SplitGrid(tc.held), jobs, opts)
				if err != nil {
					t.Fatal(err)
				}
				each, err := PlanEach(brokertest.SplitGrid(tc.held), jobs, opts)
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

// TestSplitBacklogBand: the incremental planner keeps the backlog it
// planned with while the grid's stays within backlogBand of it, and plans
// every job again, on the new figure, once it leaves the band.
func TestSplitBacklogBand(t *testing.T) {
	in, err := NewIncremental(Options{MultiSiteFactor: 1.5, Tolerance: DefaultTolerance, FreeTolerance: DefaultFreeTolerance, SplitBacklog: 1})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []forecast.JobRequest{jb("g", 12, 1000, 3)}
	for i, c := range []struct {
		held    int64 // local work held on b: held × 8 processor-seconds
		backlog int64 // what the cycle plans with
		moved   bool
		want    string
	}{
		{12_000, 3375, false, "a/a1:12"},      // (96,000 + g's 12,000) / 32
		{10_000, 3375, false, "a/a1:12"},      // 2875 s: within 25 % of 3375
		{6_000, 1875, true, "b/b1:8 c/c1:4"},  // 1875 s: out of it
		{7_000, 1875, false, "b/b1:8 c/c1:4"}, // 2125 s
		{12_000, 3375, true, "a/a1:12"},
	} {
		fcs := brokertest.SplitGrid(c.held)
		out, st, err := in.Plan(fcs, jobs, 0)
		if err != nil {
			t.Fatal(err)
		}
		if st.Backlog != c.backlog || (st.FullWhy == "the backlog moved") != c.moved || partsOf(out[0]) != c.want {
			t.Errorf("cycle %d (backlog now %d): planned with %d (full: %q), g on %q; want %d, moved %v, on %q",
				i, Backlog(fcs, jobs, 0), st.Backlog, st.FullWhy, partsOf(out[0]), c.backlog, c.moved, c.want)
		}
	}
}

// TestSplitIncrementalSameAnswers: with the split window, the incremental
// planner's answers are those of placing every job from scratch with the
// backlog it planned with, cycle after cycle, on random instances.
func TestSplitIncrementalSameAnswers(t *testing.T) {
	setup := func(it int, o *Options) {
		o.Order, o.MultiSiteFactor, o.SplitBacklog = OrderFCFS, 1.5, float64(1+it%3)
	}
	eachIncrementalCycle(t, rand.New(rand.NewPCG(7, 11)), setup, func(c incCycle) {
		if now := Backlog(c.fcs, c.jobs, c.opts.NotBefore); KeptBacklog(c.st.Backlog, now, true) != c.st.Backlog {
			t.Fatalf("instance %d cycle %d: planned with backlog %d, the grid's is %d: outside the band", c.it, c.cycle, c.st.Backlog, now)
		}
		if want := placeEachAt(t, c.fcs, c.jobs, c.opts, c.st.Backlog); !reflect.DeepEqual(c.got, want) {
			t.Fatalf("instance %d cycle %d (backlog %d): incremental %+v\nfrom scratch %+v", c.it, c.cycle, c.st.Backlog, c.got, want)
		}
	})
}

// placeEachAt is PlanEach with the pool's backlog set to backlog.
func placeEachAt(t *testing.T, fcs []forecast.Forecast, jobs []forecast.JobRequest, o Options, backlog int64) []forecast.Allocation {
	t.Helper()
	p, err := NewPool(fcs, o)
	if err != nil {
		t.Fatal(err)
	}
	p.backlog = backlog
	q := slices.Clone(jobs)
	o.SortQueue(q)
	byID := map[string]forecast.Allocation{}
	for _, j := range q {
		byID[j.ID] = p.Place(j)
	}
	out := make([]forecast.Allocation, len(jobs))
	for i, j := range jobs {
		out[i] = byID[j.ID]
	}
	return out
}

// TestHeldKeptOverTime: the held work counted once and carried forward
// while no held slot's edge passes (heldOf.holds, at) is what counting it
// again gives, on random slots at random later instants.
func TestHeldKeptOverTime(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for it := range 2000 {
		var slots []forecast.Slot
		for range 1 + r.IntN(8) {
			st := int64(r.IntN(1000))
			slots = append(slots, forecast.Slot{Node: "n", Procs: 1 + r.IntN(8), Start: st, End: st + 1 + int64(r.IntN(500)), Price: float64(1 + r.IntN(3))})
		}
		t0 := int64(r.IntN(1200))
		h := heldIn(slots, 1, t0)
		for t1 := t0; h.holds(1, t1) && t1 < 2000; t1 += 1 + int64(r.IntN(50)) {
			if got, want := h.at(t1), heldIn(slots, 1, t1).work; math.Abs(got-want) > 1e-6 {
				t.Fatalf("instance %d: counted at %d, carried to %d: %v, counted there: %v", it, t0, t1, got, want)
			}
		}
		if h.holds(2, t0) || (h.until < math.MaxInt64 && h.holds(1, h.until+1)) || h.holds(1, t0-1) {
			t.Fatalf("instance %d: the count holds at another free price or outside [%d, %d]", it, h.from, h.until)
		}
	}
}

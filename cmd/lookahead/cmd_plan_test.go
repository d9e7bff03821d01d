package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookahead/broker/brokertest"
	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/internal/cli"
)

var examplePlan = planOptions{
	forecasts: []string{"../../examples/plan/alpha.json", "../../examples/plan/beta.json"},
	jobs:      "../../examples/plan/queue.json",
	output:    cli.FormatJSON,
}

func TestPlanJSONIsAllocationsInQueueOrder(t *testing.T) {
	var out bytes.Buffer
	if err := runPlan(context.Background(), examplePlan, nil, &out); err != nil {
		t.Fatal(err)
	}
	var allocs []forecast.Allocation
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&allocs); err != nil {
		t.Fatalf("stdout is not a JSON array of allocations: %v", err)
	}
	if dec.More() {
		t.Fatal("more than one JSON value on stdout")
	}
	want := []string{"g1", "g2", "g3", "g4", "g5"}
	if len(allocs) != len(want) {
		t.Fatalf("%d allocations, want %d", len(allocs), len(want))
	}
	for i, a := range allocs {
		if a.Job != want[i] {
			t.Fatalf("allocation %d is for %s, want %s", i, a.Job, want[i])
		}
	}
	for _, id := range []int{0, 1, 2} {
		if !allocs[id].Placed() {
			t.Errorf("%s not placed: %s", allocs[id].Job, allocs[id].Error)
		}
	}
	for _, id := range []int{3, 4} {
		if !strings.HasPrefix(allocs[id].Error, "no-fit:") {
			t.Errorf("%s: error %q, want a no-fit", allocs[id].Job, allocs[id].Error)
		}
	}
}

func TestPlanTable(t *testing.T) {
	opts := examplePlan
	opts.output = cli.FormatTable
	var out bytes.Buffer
	if err := runPlan(context.Background(), opts, nil, &out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"JOB", "alpha/a01:8", "no-fit:", "3 of 5 jobs placed"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, out.String())
		}
	}
}

func TestPlanRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":2,"site":"x","nodes":[],"slots":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	badJobs := filepath.Join(dir, "jobs.json")
	if err := os.WriteFile(badJobs, []byte(`[{"id":"a","procs":1,"walltime":10},{"id":"b","procs":-1,"walltime":10}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		opts planOptions
		want string
	}{
		"no forecast":   {planOptions{jobs: examplePlan.jobs, output: "json"}, "--forecast"},
		"no jobs":       {planOptions{forecasts: examplePlan.forecasts, output: "json"}, "--jobs"},
		"bad format":    {planOptions{forecasts: examplePlan.forecasts, jobs: examplePlan.jobs, output: "yaml"}, "--output"},
		"missing file":  {planOptions{forecasts: []string{filepath.Join(dir, "nope.json")}, jobs: examplePlan.jobs, output: "json"}, "nope.json"},
		"version 2":     {planOptions{forecasts: []string{bad}, jobs: examplePlan.jobs, output: "json"}, "version 2"},
		"negative proc": {planOptions{forecasts: examplePlan.forecasts, jobs: badJobs, output: "json"}, "jobs[1]"},
		"same site twice": {planOptions{forecasts: []string{examplePlan.forecasts[0], examplePlan.forecasts[0]},
			jobs: examplePlan.jobs, output: "json"}, "duplicates"},
		"bad criterion": {planOptions{forecasts: examplePlan.forecasts, jobs: examplePlan.jobs, output: "json",
			criterion: "fastest"}, "criterion"},
		"bad tolerance": {planOptions{forecasts: examplePlan.forecasts, jobs: examplePlan.jobs, output: "json",
			tolerance: -1}, "tolerance"},
		"bad free tolerance": {planOptions{forecasts: examplePlan.forecasts, jobs: examplePlan.jobs, output: "json",
			freeTolerance: 101}, "free tolerance"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := runPlan(context.Background(), c.opts, nil, &out)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %q", err, c.want)
			}
			if code := cli.ExitCode(err); code != cli.ExitUsage {
				t.Fatalf("exit code %d, want %d (usage)", code, cli.ExitUsage)
			}
			if out.Len() != 0 {
				t.Fatalf("printed %q on bad input", out.String())
			}
		})
	}
}

func TestPlanJobsFromStdin(t *testing.T) {
	opts := examplePlan
	opts.jobs = "-"
	planOne(t, opts, strings.NewReader(`[{"id":"x","procs":8,"walltime":600,"max_price":2}]`))
}

// TestPlanCriterionAndWhy: --criterion plans the jobs that omit one, and
// every placed allocation says why it won, naming the criterion used.
func TestPlanCriterionAndWhy(t *testing.T) {
	for _, crit := range forecast.Criteria() {
		opts := examplePlan
		opts.criterion, opts.tolerance = crit, 0.5
		var out bytes.Buffer
		if err := runPlan(context.Background(), opts, nil, &out); err != nil {
			t.Fatal(err)
		}
		var allocs []forecast.Allocation
		if err := json.Unmarshal(out.Bytes(), &allocs); err != nil {
			t.Fatal(err)
		}
		jobs, err := readJobs(examplePlan.jobs, nil)
		if err != nil {
			t.Fatal(err)
		}
		placed := 0
		for i, a := range allocs {
			if !a.Placed() {
				continue
			}
			placed++
			want := jobs[i].Criterion
			if want == "" {
				want = crit
			}
			if !strings.HasPrefix(a.Why, want+": ") {
				t.Fatalf("--criterion %s: job %s why %q, want it to start with %q", crit, a.Job, a.Why, want)
			}
		}
		if placed == 0 {
			t.Fatalf("--criterion %s: nothing placed", crit)
		}
	}
}

// TestPlanFreeTolerance: --free-tolerance reaches the planner. Site q's
// time is a local job's forecast time (price 2) from now, site f is free
// (price 1) from 40 s: a 100 s free-first job waits for f when the free
// window admits 40 s, and buys q's time when it does not.
func TestPlanFreeTolerance(t *testing.T) {
	opts := queuedOrFree(t, 0, 0)
	for ftol, want := range map[float64]string{0.5: "f", 0.3: "q"} {
		opts.freeTolerance = ftol
		if got := planOneSite(t, opts); got != want {
			t.Errorf("free tolerance %v: on %s, want %s", ftol, got, want)
		}
	}
}

// TestPlanFreeWindow: --free-window reaches the planner. As above, with
// the job submitted 20 s before --not-before and a free window of 0.5 ×
// 100 s: counted after each earliest finish it admits f's free time 40 s
// later; since submission 20 s of it are spent and q's time is bought.
func TestPlanFreeWindow(t *testing.T) {
	opts := queuedOrFree(t, 1000, 980)
	opts.freeTolerance = 0.5
	for window, want := range map[string]string{coalloc.FreeWindowEachCycle: "f", coalloc.FreeWindowSinceSubmit: "q"} {
		opts.freeWindow = window
		if got := planOneSite(t, opts); got != want {
			t.Errorf("free window %s: on %s, want %s", window, got, want)
		}
	}
	opts.freeWindow = "always"
	if err := runPlan(context.Background(), opts, nil, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "free_window") {
		t.Errorf("--free-window always: %v, want an error naming it", err)
	}
}

// queuedOrFree is plan's options for the free-window tests: site q's
// processors are a local job's forecast time (price 2) from now, site f's
// free (price 1) from now+40; one 4-processor 100 s free-first job
// submitted at submitted, max price 2, planned from now.
func queuedOrFree(t *testing.T, now, submitted int64) planOptions {
	dir := t.TempDir()
	write := func(name string, v any) string { return writeJSON(t, dir, name, v) }
	site := func(name string, start int64, price float64) forecast.Forecast {
		return forecast.Forecast{Version: 1, Site: name, Horizon: 10000,
			Nodes: []forecast.Node{{Name: "n1", Procs: 4, Speed: 1, MemMB: 1000}},
			Slots: []forecast.Slot{{Node: "n1", Procs: 4, Start: start, End: 10000, Price: price}}}
	}
	return planOptions{forecasts: []string{write("q.json", site("q", now, 2)), write("f.json", site("f", now+40, 1))},
		jobs:   write("jobs.json", []forecast.JobRequest{{ID: "j", Procs: 4, Walltime: 100, MaxPrice: 2, Submitted: submitted}}),
		output: cli.FormatJSON, criterion: forecast.FreeFirst, tolerance: 0.5, notBefore: now}
}

// planOneSite plans the one job of opts and returns the site of its first
// part (the test fails when it is not placed).
func planOneSite(t *testing.T, opts planOptions) string {
	t.Helper()
	a := planOne(t, opts, nil)
	t.Logf("on %s: %s", a.Parts[0].Site, a.Why)
	return a.Parts[0].Site
}

// planOne plans the one job of opts (read from in when opts.jobs is "-")
// and returns its allocation; the test fails when it is not placed.
func planOne(t *testing.T, opts planOptions, in io.Reader) forecast.Allocation {
	t.Helper()
	var out bytes.Buffer
	if err := runPlan(context.Background(), opts, in, &out); err != nil {
		t.Fatal(err)
	}
	var allocs []forecast.Allocation
	if err := json.Unmarshal(out.Bytes(), &allocs); err != nil || len(allocs) != 1 || !allocs[0].Placed() {
		t.Fatalf("%s (%v)", out.String(), err)
	}
	return allocs[0]
}

// TestPlanOrder: --order fcfs (the default) plans an earlier job first
// whatever it pays, --order price the better payer, --order aging the
// better payer only when its 3 credits more are worth more than the 100 s
// it came later (--aging above 33 s): two jobs that each want g1's 48
// processors start in turn, in the order's turn. --aging goes with
// --order aging only.
func TestPlanOrder(t *testing.T) {
	queue := filepath.Join(t.TempDir(), "queue.json")
	os.WriteFile(queue, []byte(`[
  {"id": "early", "procs": 48, "walltime": 7200, "max_price": 2, "criterion": "earliest-start", "user": "a", "submitted": 1763779000},
  {"id": "rich", "procs": 48, "walltime": 7200, "max_price": 5, "criterion": "earliest-start", "user": "b", "submitted": 1763779100}
]`), 0o600)
	for _, tc := range []struct {
		order string
		aging time.Duration
		first string
	}{{"", 0, "early"}, {"fcfs", 0, "early"}, {"price", 0, "rich"}, {"aging", time.Minute, "rich"}, {"aging", 30 * time.Second, "early"}} {
		order, first := fmt.Sprintf("%s/%s", tc.order, tc.aging), tc.first
		opts := examplePlan
		opts.jobs, opts.order, opts.aging = queue, tc.order, tc.aging
		var out bytes.Buffer
		if err := runPlan(context.Background(), opts, nil, &out); err != nil {
			t.Fatal(err)
		}
		var allocs []forecast.Allocation
		if err := json.Unmarshal(out.Bytes(), &allocs); err != nil || len(allocs) != 2 || !allocs[0].Placed() || !allocs[1].Placed() {
			t.Fatalf("order %q: %v %+v", order, err, allocs)
		}
		if got := map[bool]string{true: "early", false: "rich"}[allocs[0].Start < allocs[1].Start]; got != first {
			t.Errorf("order %q: %s starts first (%d, %d), want %s", order, got, allocs[0].Start, allocs[1].Start, first)
		}
	}
	for _, tc := range []struct {
		order string
		aging time.Duration
		want  string
	}{
		{"random", 0, `--order "random": must be`},
		{"aging", 0, `--aging: required with --order "aging"`},
		{"price", time.Hour, `--aging 1h: only --order "aging" uses it (the order is "price")`},
		{"", time.Hour, `--aging 1h: only --order "aging" uses it (the order is "fcfs")`},
		{"aging", -time.Hour, `--aging -1h: must not be negative`},
	} {
		opts := examplePlan
		opts.order, opts.aging = tc.order, tc.aging
		err := runPlan(context.Background(), opts, nil, &bytes.Buffer{})
		if !errors.As(err, new(cli.UsageError)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--order %q --aging %s: %v, want a usage error naming %s", tc.order, tc.aging, err, tc.want)
		}
	}
}

// TestPlanSplitBacklog: --split-backlog reaches the planner. Site a (16
// processors) is free from 2000, b and c (8 each) now; local jobs hold b
// for 12,000 s from 10,000. A 12-processor job of 1000 s at factor 1.5
// splits over b and c (finishing at 1500) without the window and waits
// for a (3000) with it (docs/coalloc.md, "The split window").
func TestPlanSplitBacklog(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, f := range brokertest.SplitGrid(12_000) {
		files = append(files, writeJSON(t, dir, f.Site+".json", f))
	}
	opts := planOptions{forecasts: files,
		jobs:   writeJSON(t, dir, "jobs.json", []forecast.JobRequest{{ID: "j", Procs: 12, Walltime: 1000, MaxPrice: 3}}),
		output: cli.FormatJSON, criterion: forecast.FreeFirst, tolerance: 0.5, freeTolerance: 2, multiSiteFactor: 1.5}
	for split, want := range map[float64]int{0: 2, 1: 1} {
		opts.splitBacklog = split
		if a := planOne(t, opts, nil); len(a.Parts) != want {
			t.Errorf("--split-backlog %v: %d parts, want %d (%s)", split, len(a.Parts), want, a.Why)
		}
	}
}

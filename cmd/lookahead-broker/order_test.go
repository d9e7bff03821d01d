package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"lookahead/broker/brokertest"
	"lookahead/forecast"
)

// TestPlanningOrderReachesTheCommits: planning.order (and aging's
// planning.aging) sets the order the daemon commits a cycle's allocations
// in and names, the planner's own: fcfs is the default (issue 33's study,
// docs/replay.md). A job submitted 1.5 h after another and paying 1
// credit more goes first only with aging at more than 1.5 h per credit.
func TestPlanningOrderReachesTheCommits(t *testing.T) {
	for conf, want := range map[string]struct{ order, first string }{
		"planning:\n  order: price\n":                         {"price", "dear"},
		"planning: {}\n":                                      {"fcfs", "early"},
		"planning:\n  order: aging\n  aging: 2h\n":            {"aging", "dear"},
		"planning:\n  order: aging\n  aging: 1h\n":            {"aging", "early"},
		"planning:\n  order: fcfs\n  criterion: least-held\n": {"fcfs", "early"},
	} {
		c := configFrom(t, conf)
		q := daemonConfig(c, zerolog.Nop(), nil).Queue
		jobs := []forecast.JobRequest{{ID: "early", MaxPrice: 1, Submitted: 0}, {ID: "dear", MaxPrice: 2, Submitted: 5400}}
		q.SortQueue(jobs)
		if got := q.Order(); got != want.order || jobs[0].ID != want.first {
			t.Fatalf("%q: the daemon commits in order %q with %s first, want %s with %s first", conf, got, jobs[0].ID, want.order, want.first)
		}
	}
}

// TestFreeWindowReachesThePlanner: planning.free_window sets what
// free_tolerance counts from in the daemon's planner. Site q's time is a
// local job's forecast time (price 2) from 1000, site f is free (price 1)
// from 1040; a 100 s free-first job submitted at 980 and planned at 1000
// with free_tolerance 0.5 waits for f counted after each earliest finish,
// and buys q's time when its 20 s waited are spent from the window.
func TestFreeWindowReachesThePlanner(t *testing.T) {
	site := func(name string, start int64, price float64) forecast.Forecast {
		return forecast.Forecast{Version: 1, Site: name, Horizon: 10000,
			Nodes: []forecast.Node{{Name: "n1", Procs: 4, Speed: 1, MemMB: 1000}},
			Slots: []forecast.Slot{{Node: "n1", Procs: 4, Start: start, End: 10000, Price: price}}}
	}
	fcs := []forecast.Forecast{site("q", 1000, 2), site("f", 1040, 1)}
	for conf, want := range map[string]string{
		"planning: {free_tolerance: 0.5}\n":                            "f",
		"planning: {free_tolerance: 0.5, free_window: since-submit}\n": "q",
	} {
		c := configFrom(t, conf)
		jobs := []forecast.JobRequest{{ID: "j", Procs: 4, Walltime: 100, MaxPrice: 2, Submitted: 980, Criterion: forecast.FreeFirst}}
		out, err := daemonConfig(c, zerolog.Nop(), nil).Planner(fcs, jobs, 1000)
		if err != nil || len(out) != 1 || !out[0].Placed() {
			t.Fatalf("%q: %+v (%v)", conf, out, err)
		}
		if got := out[0].Parts[0].Site; got != want {
			t.Errorf("%q: on %s, want %s (%s)", conf, got, want, out[0].Why)
		}
	}
}

// configFrom is run's configuration from a config file holding text.
func configFrom(t *testing.T, text string) Config {
	t.Helper()
	file := filepath.Join(t.TempDir(), "broker.yaml")
	os.WriteFile(file, []byte(text), 0o600)
	cmd := subcommand("run")
	cmd.Flags().Parse([]string{"--config", file})
	c, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSplitBacklogReachesThePlanner: planning.split_backlog sets the
// daemon planner's split window (docs/coalloc.md). Site a (16
// processors) is free from 2000, b and c (8 each) now; local jobs hold b
// for 12,000 s from 10,000 (price 2, its free price 1). A 12-processor
// job of 1000 s at factor 1.5 finishes at 1500 split over b and c, at
// 3000 on a alone: with the window (k 1, a backlog of 3375 s) it waits
// for a; without it (the default) it splits.
func TestSplitBacklogReachesThePlanner(t *testing.T) {
	fcs := brokertest.SplitGrid(12_000)
	for conf, want := range map[string]int{
		"planning: {multi_site_factor: 1.5}\n":                   2,
		"planning: {multi_site_factor: 1.5, split_backlog: 1}\n": 1,
	} {
		c := configFrom(t, conf)
		jobs := []forecast.JobRequest{{ID: "j", Procs: 12, Walltime: 1000, MaxPrice: 3, Criterion: forecast.FreeFirst}}
		out, err := daemonConfig(c, zerolog.Nop(), nil).Planner(fcs, jobs, 0)
		if err != nil || len(out) != 1 || !out[0].Placed() {
			t.Fatalf("%q: %+v (%v)", conf, out, err)
		}
		if got := len(out[0].Parts); got != want {
			t.Errorf("%q: %d parts, want %d (%s)", conf, got, want, out[0].Why)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

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
		file := filepath.Join(t.TempDir(), "broker.yaml")
		os.WriteFile(file, []byte(conf), 0o600)
		cmd := subcommand("run")
		cmd.Flags().Parse([]string{"--config", file})
		c, err := loadConfig(cmd.Flags())
		if err != nil {
			t.Fatal(err)
		}
		q := daemonConfig(c, zerolog.Nop(), nil).Queue
		jobs := []forecast.JobRequest{{ID: "early", MaxPrice: 1, Submitted: 0}, {ID: "dear", MaxPrice: 2, Submitted: 5400}}
		q.SortQueue(jobs)
		if got := q.Order(); got != want.order || jobs[0].ID != want.first {
			t.Fatalf("%q: the daemon commits in order %q with %s first, want %s with %s first", conf, got, jobs[0].ID, want.order, want.first)
		}
	}
}

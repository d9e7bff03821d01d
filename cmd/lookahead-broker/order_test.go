package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
)

// TestPlanningOrderReachesTheCommits: planning.order sets the order the
// daemon commits a cycle's allocations in, not only the planner's; fcfs
// is the default (issue 33's study, docs/replay.md).
func TestPlanningOrderReachesTheCommits(t *testing.T) {
	for conf, want := range map[string]string{"planning:\n  order: price\n": "price", "planning: {}\n": "fcfs"} {
		file := filepath.Join(t.TempDir(), "broker.yaml")
		os.WriteFile(file, []byte(conf), 0o600)
		cmd := subcommand("run")
		cmd.Flags().Parse([]string{"--config", file})
		c, err := loadConfig(cmd.Flags())
		if err != nil {
			t.Fatal(err)
		}
		if got := daemonConfig(c, zerolog.Nop(), nil).Order; got != want {
			t.Fatalf("%q: daemon commit order %q, want %s", conf, got, want)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
)

// TestPlanningOrderReachesTheCommits: planning.order sets the order the
// daemon commits a cycle's allocations in, not only the planner's.
func TestPlanningOrderReachesTheCommits(t *testing.T) {
	file := filepath.Join(t.TempDir(), "broker.yaml")
	os.WriteFile(file, []byte("planning:\n  order: fcfs\n"), 0o600)
	cmd := subcommand("run")
	cmd.Flags().Parse([]string{"--config", file})
	c, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	if got := daemonConfig(c, zerolog.Nop(), nil).Order; got != "fcfs" {
		t.Fatalf("daemon commit order %q, want fcfs", got)
	}
}

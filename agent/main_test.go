package agent_test

import (
	"os"
	"testing"

	"lookahead/slurm/slurmtest"
)

// The live Slurm tests share private clusters (slurmtest.Shared); Main
// stops them after the last test.
func TestMain(m *testing.M) { os.Exit(slurmtest.Main(m)) }

package slurmtest

import (
	"strings"
	"testing"
)

// The private cluster answers root and the second user, and its node has
// the CPUs it was given.
func TestStartPrivateCluster(t *testing.T) {
	c := Start(t, Options{CPUs: 8})
	r := c.Run("sinfo", "-h", "-N", "-o", "%N %c %T")
	if got, want := strings.TrimSpace(r.Stdout), c.Node+" 8 idle"; got != want {
		t.Fatalf("sinfo = %q (exit %d, %s), want %q", got, r.ExitCode, r.Stderr, want)
	}
	r = c.RunAsUser2("squeue", "-h")
	if r.ExitCode != 0 {
		t.Fatalf("squeue as %s: exit %d: %s", User2, r.ExitCode, r.Stderr)
	}
	r = c.RunAsUser2("sbatch", "--parsable", "-o", "/dev/null", "-n", "1", "--wrap", "sleep 300")
	if r.ExitCode != 0 {
		t.Fatalf("sbatch as %s: exit %d: %s", User2, r.ExitCode, r.Stderr)
	}
	id := strings.TrimSpace(r.Stdout)
	err := c.waitFor("the job to run", 30_000_000_000, func() bool {
		return strings.TrimSpace(c.Run("squeue", "-h", "-j", id, "-o", "%T %u").Stdout) == "RUNNING "+User2
	})
	if err != nil {
		t.Fatal(err)
	}
}

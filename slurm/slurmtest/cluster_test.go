package slurmtest

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

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
	err := c.waitFor("the job to run", 30*time.Second, func() bool {
		return strings.TrimSpace(c.Run("squeue", "-h", "-j", id, "-o", "%T %u").Stdout) == "RUNNING "+User2
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Two slurmd on one host: a job across both nodes runs, and a shared
// cluster is handed to the next test with no job and no reservation left.
func TestSharedTwoNodeCluster(t *testing.T) {
	for round := range 2 {
		c := Shared(t, Options{CPUs: 4, Nodes: 2})
		r := c.Run("sinfo", "-h", "-N", "-o", "%N %c %T")
		if got := strings.Fields(r.Stdout); strings.Join(got, " ") != "n1 4 idle n2 4 idle" {
			t.Fatalf("round %d: sinfo = %q", round, r.Stdout)
		}
		if r := c.Run("scontrol", "show", "reservation"); !strings.Contains(r.Stdout, "No reservations") {
			t.Fatalf("round %d: reservations left: %s", round, r.Stdout)
		}
		r = c.RunAsUser2("sbatch", "--parsable", "-o", "/dev/null", "-N", "2", "-n", "8", "-t", "5", "--wrap", "sleep 300")
		if r.ExitCode != 0 {
			t.Fatalf("sbatch: %+v", r)
		}
		id := strings.TrimSpace(r.Stdout)
		if err := c.waitFor("the job to run", 30*time.Second, func() bool {
			return strings.TrimSpace(c.Run("squeue", "-h", "-j", id, "-o", "%T %N").Stdout) == "RUNNING n[1-2]"
		}); err != nil {
			t.Fatal(err)
		}
		if r := c.Run("scontrol", "create", "reservation", "reservationname=left", "users=root", "starttime=now+1hour",
			"duration=10", "nodes=n2", "corecnt=1"); r.ExitCode != 0 {
			t.Fatalf("create: %+v", r)
		}
	}
}

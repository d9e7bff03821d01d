package slurm

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"lookahead/slurm/slurmtest"
)

// Against a real private slurmctld (skips with the reason where Slurm
// cannot be started): snapshot, a core reservation for the second user,
// overlap, duplicate-name and busy refusals, delete refused while a job is
// queued in it, then done, then answered as no such reservation.
func TestLiveReservations(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	cl := NewExecClient(ExecConfig{Conf: c.Conf, Timeout: 30 * time.Second, Loc: time.Local})
	ctx := context.Background()

	s, err := cl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// (a shared cluster still lists earlier tests' finished jobs for
	// MinJobAge)
	unfinished := slices.ContainsFunc(s.Jobs, func(j Job) bool { return TorqueState(j) != "C" })
	if len(s.Nodes) != 1 || s.Nodes[0].Name != c.Node || s.Nodes[0].CPUs != 8 || s.Nodes[0].Condition() != NodeIdle ||
		unfinished || len(s.Reservations) != 0 {
		t.Fatalf("fresh cluster snapshot = %+v", s)
	}

	start := time.Now().Add(time.Hour).Truncate(time.Second)
	spec := ReservationSpec{Name: "grid-live-1", Users: []string{slurmtest.User2}, Start: start,
		Duration: 30 * time.Minute, NodeCount: 1, CoreCount: 4, Partition: "batch"}
	mustAnswer(t, Created)(cl.CreateReservation(ctx, spec))
	rs, err := cl.Reservations(ctx)
	if err != nil || len(rs) != 1 {
		t.Fatalf("reservations = %+v, %v", rs, err)
	}
	r := rs[0]
	// (CoreIDs may not be printed yet: on one node CoreCnt is exact)
	hosts, exact := r.Split(nil)
	if r.Name != spec.Name || !r.Start.Equal(start) || !r.End.Equal(start.Add(30*time.Minute)) || r.CoreCount != 4 ||
		!slices.Equal(r.Users, []string{slurmtest.User2}) || !exact || !slices.Equal(hosts, []NodeCPUs{{Node: c.Node, CPUs: 4}}) {
		t.Fatalf("reservation read back = %+v", r)
	}
	t.Logf("CoreIDs lines right after the create: %+v", r.Cores)

	over := spec
	over.Name, over.CoreCount, over.Start = "grid-live-2", 8, start.Add(10*time.Minute)
	mustAnswer(t, NodesBusy)(cl.CreateReservation(ctx, over))
	mustAnswer(t, Exists)(cl.CreateReservation(ctx, spec))

	// The second user's job waits in the reservation; root's is refused.
	if res := c.Run("sbatch", "-o", "/dev/null", "-n", "1", "--reservation="+spec.Name, "--wrap", "true"); res.ExitCode == 0 ||
		!strings.Contains(res.Stderr, "Access denied to requested reservation") {
		t.Errorf("root into %s's reservation: %+v", slurmtest.User2, res)
	}
	res := c.RunAsUser2("sbatch", "--parsable", "-o", "/dev/null", "-n", "4", "-t", "20", "--reservation="+spec.Name, "--wrap", "sleep 1")
	if res.ExitCode != 0 {
		t.Fatalf("sbatch into the reservation: %+v", res)
	}
	job := strings.TrimSpace(res.Stdout)
	mustAnswer(t, InUse)(cl.DeleteReservation(ctx, spec.Name))
	if res := c.Run("scancel", job); res.ExitCode != 0 {
		t.Fatalf("scancel: %+v", res)
	}
	mustAnswer(t, Deleted)(cl.DeleteReservation(ctx, spec.Name))
	mustAnswer(t, NoSuch)(cl.DeleteReservation(ctx, spec.Name))

	// Running jobs on the cores: a reservation from now is refused.
	if res := c.RunAsUser2("sbatch", "-o", "/dev/null", "-n", "2", "--wrap", "sleep 300"); res.ExitCode != 0 {
		t.Fatalf("sbatch: %+v", res)
	}
	waitRunning(t, cl)
	now := ReservationSpec{Name: "grid-live-3", Users: []string{"root"}, Start: time.Now().Add(time.Second).Truncate(time.Second),
		Duration: 10 * time.Minute, Nodes: c.Node, Partition: "batch"}
	mustAnswer(t, NodesBusy)(cl.CreateReservation(ctx, now))
}

func mustAnswer(t *testing.T, want Code) func(Answer, error) {
	t.Helper()
	return func(a Answer, err error) {
		t.Helper()
		if err != nil || a.Code != want {
			t.Fatalf("answer %+v, %v; want %s", a, err, want)
		}
	}
}

func waitRunning(t *testing.T, cl *Client) {
	t.Helper()
	for range 150 {
		s, err := cl.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(s.Jobs, Job.Running) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("no job ran within 30 s")
}

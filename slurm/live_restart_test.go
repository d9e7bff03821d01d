package slurm

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"lookahead/slurm/slurmtest"
)

// What a slurmctld restart (saved state kept, as an operator's restart)
// does to our reservations: a future one and an active one with the
// second user's job running in it read back the same afterwards, and the
// job is still running in its reservation.
func TestLiveRestartKeepsReservations(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	cl := NewExecClient(ExecConfig{Conf: c.Conf, Timeout: 30 * time.Second, Loc: time.Local})
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	for _, spec := range []ReservationSpec{
		{Name: "grid-soon", Start: now.Add(3 * time.Second), Duration: 20 * time.Minute, CoreCount: 4},
		{Name: "grid-later", Start: now.Add(2 * time.Hour), Duration: 30 * time.Minute, CoreCount: 2},
	} {
		spec.Users, spec.NodeCount, spec.Partition = []string{slurmtest.User2}, 1, "batch"
		mustAnswer(t, Created)(cl.CreateReservation(ctx, spec))
	}
	res := c.RunAsUser2("sbatch", "--parsable", "-o", "/dev/null", "-n", "4", "-t", "10", "--reservation=grid-soon", "--wrap", "sleep 300")
	if res.ExitCode != 0 {
		t.Fatalf("sbatch: %+v", res)
	}
	id := strings.TrimSpace(res.Stdout)
	job := waitJobRunning(t, cl, id)
	t.Logf("reservation start %s, job %s started %s (delay %v; not asserted)",
		now.Add(3*time.Second).Format(time.TimeOnly), id, job.Start.Local().Format(time.TimeOnly), job.Start.Sub(now.Add(3*time.Second)))
	before, err := cl.Reservations(ctx)
	if err != nil || len(before) != 2 {
		t.Fatalf("before: %+v, %v", before, err)
	}

	t0 := time.Now()
	c.RestartController()
	t.Logf("restart took %v", time.Since(t0))

	after, err := cl.Reservations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Seen in every run: before the restart, scontrol omits the CoreIDs
	// of grid-later (a future core reservation made while grid-soon is
	// active) and prints them after; everything else is unchanged.
	for i := range before {
		t.Logf("%s cores before %v, after %v", before[i].Name, before[i].Cores, after[i].Cores)
	}
	if !reflect.DeepEqual(withoutCores(before), withoutCores(after)) {
		t.Errorf("reservations changed across the restart:\nbefore %+v\nafter  %+v", before, after)
	}
	again := waitJobRunning(t, cl, id)
	if again.Reservation != "grid-soon" || !again.Start.Equal(*job.Start) {
		t.Errorf("job after the restart = %+v, before %+v", again, job)
	}
}

// waitJobRunning waits (30 s at most) until job id runs and returns it.
func waitJobRunning(t *testing.T, cl *Client, id string) Job {
	t.Helper()
	for range 150 {
		s, err := cl.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(s.Jobs, func(j Job) bool { return j.Running() && strconvID(j.ID) == id })
		if i >= 0 {
			return s.Jobs[i]
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("job %s did not run within 30 s", id)
	return Job{}
}

func withoutCores(rs []Reservation) []Reservation {
	out := slices.Clone(rs)
	for i := range out {
		out[i].Cores = nil
	}
	return out
}

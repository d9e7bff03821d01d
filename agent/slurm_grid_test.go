package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/slurm/slurmtest"
	"lookahead/wire"
)

// One grid job across a real Slurm cluster (8 cores) and a simulated
// Torque/Maui-kind site (2 × 4 processors): neither can run its 10
// processors alone. The broker, with no Slurm code, plans, reserves on
// both, dispatches both parts and sees them finish; the Slurm part runs
// as the mapped user inside its reservation. A second job reserved on
// both is audited clean; its Slurm reservation changed by hand is
// repaired by the running agent at its next poll (as after a Maui
// restart); changed again while no agent holds it (the agent restarted
// without a hold-state file), the broker's audit finds the drift;
// cancelling the job releases both sites.
func TestLiveGridJobAcrossSlurmAndMaui(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	g := startSlurmGrid(t, c, gridOptions{})
	site, cl := g.site, g.cl
	ctx := context.Background()

	script := []byte("#!/bin/sh\n#lookahead-sim runtime=3s exit=0\necho part $LOOKAHEAD_PART of $LOOKAHEAD_JOB on $LOOKAHEAD_SITE as $(id -un)\nsleep 3\n")
	job := forecast.JobRequest{ID: gridRunID("x1"), Procs: 10, Walltime: 180, MaxSites: 2, User: "alice", Account: "proj1", MaxPrice: 100}
	if r, err := cl.SubmitScript(ctx, job, script, ""); err != nil || r.Code != wire.CodeOK {
		t.Fatalf("submit: %+v, %v", r, err)
	}
	st := waitJob(t, cl, job.ID, wire.JobFinished, 3*time.Minute)
	bySite := map[string]wire.PartStatus{}
	for _, p := range st.Parts {
		bySite[p.Site] = p
	}
	sl, ok := bySite["sl"]
	if !ok || bySite["tm"].State == "" {
		t.Fatalf("parts %+v", st.Parts)
	}
	var resv wire.Reservation
	for _, r := range st.Reservations {
		if r.Site == "sl" {
			resv = r
		}
	}
	t.Logf("cross-kind job %s: start %d, parts %+v; the Slurm part started %d s after its reservation's start", st.Job.ID, st.Plan.Start, st.Parts, sl.Start-resv.Start)
	if sl.LocalUser != slurmtest.User2 || sl.ExitStatus == nil || *sl.ExitStatus != 0 || sl.Start < resv.Start || sl.Start >= resv.End {
		t.Errorf("slurm part %+v in reservation %+v", sl, resv)
	}
	if text, _ := os.ReadFile(filepath.Join(c.OutDir(), wire.PartName(job.ID, sl.Part)+".out")); string(text) !=
		fmt.Sprintf("part %d of %s on sl as %s\n", sl.Part, job.ID, slurmtest.User2) {
		t.Errorf("slurm part output %q", text)
	}

	// A reserved job: audited clean, then drifted by hand, then cancelled.
	if r, err := cl.Submit(ctx, forecast.JobRequest{ID: "x2", Procs: 10, Walltime: 1800, MaxSites: 2, User: "alice", Account: "proj1", MaxPrice: 100}, ""); err != nil || r.Code != wire.CodeOK {
		t.Fatalf("submit: %+v, %v", r, err)
	}
	waitJob(t, cl, "x2", wire.JobReserved, time.Minute)
	if rep, err := cl.Audit(ctx, false); err != nil || len(rep.Findings) != 0 || len(rep.Errors) != 0 {
		t.Fatalf("audit of a clean grid: %+v, %v", rep, err)
	}
	// The running agent repairs a hand change at its next poll.
	if r := c.Run("scontrol", "update", "reservationname=la.x2", "users=root"); r.ExitCode != 0 {
		t.Fatalf("update: %+v", r)
	}
	// (the repair may re-create it: a listing between the two lacks it)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r, rs, err := findListed(site, "la.x2")
		if err == nil && r != nil && r.Identity.User == slurmtest.User2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not repair la.x2: %+v %v", rs, err)
		}
	}
	t.Logf("repaired by the agent: %+v", listed(t, site, "la.x2"))
	// An agent that holds no ledger of it (restarted, no hold-state file)
	// leaves a hand change to the audit.
	g.stopSl()
	if r := c.Run("scontrol", "update", "reservationname=la.x2", "users=root"); r.ExitCode != 0 {
		t.Fatalf("update: %+v", r)
	}
	g.restartSl()
	rep, err := cl.Audit(ctx, false)
	if err != nil || len(rep.Findings) != 1 || rep.Findings[0].Site != "sl" || rep.Findings[0].Kind != "drifted" {
		t.Fatalf("audit after a hand change: %+v, %v", rep, err)
	}
	t.Logf("audit finding: %+v", rep.Findings[0])
	if r, err := cl.Cancel(ctx, "x2"); err != nil || r.Code != wire.CodeOK {
		t.Fatalf("cancel: %+v, %v", r, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if rs, _ := site.List(ctx); len(rs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the Slurm reservation of the cancelled job was not released")
		}
	}
}

// gridRuns counts the runs of TestLiveGridJobAcrossSlurmAndMaui in this
// test binary (-count).
var gridRuns atomic.Int32

// gridRunID is base for the first run of the test in this binary, base-N
// for the Nth: the shared cluster still lists an earlier run's part as
// completed (squeue keeps an ended job for MinJobAge, 300 s), and the
// agent rightly takes a part of the same grid job and user for a retried
// dispatch ("already submitted"), which started before this run's
// reservation.
func gridRunID(base string) string {
	if n := gridRuns.Add(1); n > 1 {
		return fmt.Sprintf("%s-%d", base, n)
	}
	return base
}

func waitJob(t *testing.T, cl *client.Client, id, state string, limit time.Duration) wire.JobStatus {
	t.Helper()
	var last wire.JobStatus
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		r, err := cl.Status(context.Background(), id, true)
		if err == nil && len(r.Jobs) == 1 {
			last = r.Jobs[0]
			if last.State == state {
				return last
			}
			if state != wire.JobFailed && (last.State == wire.JobFailed || last.State == wire.JobExpired || last.State == wire.JobCancelled) {
				t.Fatalf("job %s ended %s: %+v", id, last.State, last)
			}
		}
	}
	t.Fatalf("job %s not %s within %v: %+v", id, state, limit, last)
	return last
}

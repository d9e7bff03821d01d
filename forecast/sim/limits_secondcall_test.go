package sim

import (
	"testing"

	"lookahead/forecast"
)

// Maui's second call reserves a job a limit refuses before IdleJobFound,
// as its first call does (MQueueScheduleIJobs → MJobPReserve), and that
// reservation holds processors against the jobs after it in the call;
// the hard MQueueSelectJobs before backfill then destroys it (a real
// Maui on maxproc at +0 s: j0025 and j0026 reserved now, j0027 reserved
// at +1800 s behind them instead of starting). Here j2 and j3 fill the
// depth in the first call and j4, refused with the depth full, is its
// IdleJobFound, so j5 starts only in the second call; that takes g2 to
// its limit, j6 is reserved now on 2 of the 3 free processors and j7 no
// longer fits now: it is reserved at j1's walltime end, too long to
// backfill before it, and starts when j1 ends.
func TestLimitsSecondCallReserves(t *testing.T) {
	mc := readCfg(t, "RESERVATIONDEPTH 2\nGROUPCFG[DEFAULT] MAXPROC=4\n")
	c := Cluster{Nodes: []forecast.SnapshotNode{{Name: "n1", Procs: 10, State: []string{forecast.NodeFree}, Speed: 1}}}
	jobs := []Job{
		{ID: "j1", Procs: 4, Walltime: 1000, Runtime: 500, Group: "g1"},
		{ID: "j2", Procs: 1, Walltime: 1000, Runtime: 500, Group: "g1"},
		{ID: "j3", Procs: 1, Walltime: 1000, Runtime: 500, Group: "g1"},
		{ID: "j4", Procs: 1, Walltime: 1000, Runtime: 500, Group: "g1"},
		{ID: "j5", Procs: 3, Walltime: 1000, Runtime: 800, Group: "g2"},
		{ID: "j6", Procs: 2, Walltime: 1000, Runtime: 500, Group: "g2"},
		{ID: "j7", Procs: 3, Walltime: 2000, Runtime: 100, Group: "g3"},
	}
	for i := range jobs {
		jobs[i].User = "u" + jobs[i].Group
	}
	got := runStarts(t, c, jobs, mc.Policy)
	if got["j1"] != 0 || got["j5"] != 0 || got["j7"] != 500 {
		t.Errorf("starts %v, want j1 and j5 at 0, j7 at 500 (behind j6's reservation in the second call)", got)
	}
}

// Under usage limits a job's queue time counts from its SystemQueueTime
// (reset while a hard limit blocks it) when no selection has set its
// effective queue duration, not from its submission: a real Maui on maxps
// printed j0072's priority as 2.30 at +8517 s (138 s since its last reset
// at +8379 s, not the 155 s since it was submitted) and 1.00 once the
// pass's first selection had reset it again.
func TestLimitsQueueTimeFromReset(t *testing.T) {
	j := newJob(Job{ID: "j", Procs: 1, Walltime: 100, Submit: 0}, 0)
	j.policy().lim = jobLim{sqt: 100}
	j.lim = &j.pol.lim
	if got := j.waited(1000); got != 900 {
		t.Errorf("waited %d, want 900 (since the reset at 100)", got)
	}
	j.lim.effQD = 50
	if got := j.waited(1000); got != 50 {
		t.Errorf("waited %d, want 50 (the effective queue duration)", got)
	}
}

// Maui's second call always runs (m_schedule_on_partitions), and a job a
// limit refused before IdleJobFound is not in it even when the first call
// could not reserve it: with the depth full its MJobPReserve failed and it
// set IdleJobFound, so the jobs after it were not looked at in the first
// call and are in the second (a real Maui on maxjob at +16623 s: j0042,
// refused by u03's MAXJOB with the depth full, ended the first call; the
// second started j0048 before the backfill window was measured). Here j1
// takes u1 to its MAXJOB, j2 fills the depth of 1, j3 (u1) is refused with
// the depth full, and j4, whose QOS may not backfill, starts only in the
// second call; skipping that call, it waits for j2 to end.
func TestLimitsSecondCallAfterFailedReserve(t *testing.T) {
	cfg := "RESERVATIONDEPTH 1\nUSERCFG[DEFAULT] MAXJOB=1 QLIST=lo\nQOSCFG[lo] QFLAGS=NOBF\n"
	jobs := []Job{
		{ID: "j1", Procs: 4, Walltime: 1000, Runtime: 1000, User: "u1"},
		{ID: "j2", Procs: 10, Walltime: 1000, Runtime: 1000, User: "u2"},
		{ID: "j3", Procs: 1, Walltime: 1000, Runtime: 1000, User: "u1"},
		{ID: "j4", Procs: 2, Walltime: 500, Runtime: 500, User: "u3", QOS: "lo"},
	}
	got := runStarts(t, UniformCluster(1, 10), jobs, readCfg(t, cfg).Policy)
	if got["j1"] != 0 || got["j2"] != 1000 || got["j4"] != 0 {
		t.Errorf("starts %v, want j1 and j4 at 0 (j4 in the second call), j2 at 1000", got)
	}
}

// Maui measures a backfill window (MBFGetWindow) only when a pseudo-job
// of user, group and account [ALL] in their default QOS passes the soft
// limits: with QOS DEFAULT at its MAXJOB no window has nodes, so nothing
// backfills, whatever the waiting jobs' QOS (a real Maui on qoslimits at
// +2313 s: "job BFWindow violates active SOFT MAXJOB limit of 8 for qos
// DEFAULT", and lo's j0043 did not backfill). Here j1 (QOS DEFAULT)
// takes DEFAULT to its MAXJOB 1, j2 is reserved, j3 cannot be (IdleJobFound)
// and j4, of QOS lo, fits before j2's reservation but may not backfill.
func TestLimitsWindowQOSDefault(t *testing.T) {
	cfg := "RESERVATIONDEPTH 1\nUSERCFG[DEFAULT] QLIST=lo\nQOSCFG[lo] MAXJOB=10\nQOSCFG[DEFAULT] MAXJOB=1\n"
	jobs := []Job{
		{ID: "j1", Procs: 4, Walltime: 1000, Runtime: 1000, User: "u1"},
		{ID: "j2", Procs: 10, Walltime: 1000, Runtime: 1000, User: "u2", QOS: "lo"},
		{ID: "j3", Procs: 10, Walltime: 1000, Runtime: 1000, User: "u3", QOS: "lo"},
		{ID: "j4", Procs: 2, Walltime: 500, Runtime: 500, User: "u4", QOS: "lo"},
	}
	got := runStarts(t, UniformCluster(1, 10), jobs, readCfg(t, cfg).Policy)
	if got["j1"] != 0 || got["j2"] != 1000 || got["j4"] != 3000 {
		t.Errorf("starts %v, want j1 at 0, j2 at 1000, j4 at 3000 (after j3, not backfilled at 0)", got)
	}
}

// runStarts runs the simulator and returns each job's start.
func runStarts(t *testing.T, c Cluster, jobs []Job, pol Policy) map[string]int64 {
	t.Helper()
	res, err := Run(c, jobs, pol)
	if err != nil {
		t.Fatal(err)
	}
	return startsOf(res)
}

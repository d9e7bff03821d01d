package agent

import (
	"os"
	"testing"

	"lookahead/torque"
	"lookahead/wire"
)

func capturedJobs(t *testing.T, name string) []torque.BatchJob {
	t.Helper()
	f, err := os.Open("testdata/dispatch/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, err := torque.ParseBatchJobs(f)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// liveParts are the parts the agent dispatched in the live captures.
func liveParts() *partTracker {
	return &partTracker{dispatched: map[string]string{"4.vm": "dispatch-p1", "7.vm": "dispatch-f1", "13.vm": "dispatch-p4"}}
}

// TestPartTrackerOnLiveCaptures follows the live-captured parts: both
// start, then one exits 0 and the other 3; other jobs are ignored and
// nothing is reported twice.
func TestPartTrackerOnLiveCaptures(t *testing.T) {
	tr := liveParts()
	evs := tr.observe(capturedJobs(t, "11_qstat_f_x_all_running.out"), 1795545030, nil)
	tr.markReported(evs)
	got := map[string]wire.JobEvent{}
	for _, ev := range evs {
		got[ev.LocalID] = ev
	}
	if len(evs) != 2 || got["4.vm"].State != "started" || got["4.vm"].Job != "dispatch-p1" || got["4.vm"].Start != 1795545028 ||
		got["7.vm"].Job != "dispatch-f1" {
		t.Fatalf("running: %+v", evs)
	}
	if again := tr.observe(capturedJobs(t, "11_qstat_f_x_all_running.out"), 1795545031, nil); len(again) != 0 {
		t.Fatalf("reported twice: %+v", again)
	}
	evs = tr.observe(capturedJobs(t, "24_qstat_f_x_all_final.out"), 1795545060, nil)
	tr.markReported(evs)
	got = map[string]wire.JobEvent{}
	for _, ev := range evs {
		got[ev.LocalID] = ev
	}
	ok := got["4.vm"]
	if ok.State != "finished" || ok.ExitStatus == nil || *ok.ExitStatus != 0 || ok.End != 1795545051 || ok.Time != ok.End {
		t.Fatalf("4.vm: %+v", ok)
	}
	bad := got["7.vm"]
	if bad.State != "failed" || bad.ExitStatus == nil || *bad.ExitStatus != 3 || bad.Message == "" {
		t.Fatalf("7.vm: %+v", bad)
	}
	if tr.observe(nil, 1795545100, nil); len(tr.reported) != 0 {
		t.Fatalf("parts no longer listed are remembered: %v", tr.reported)
	}
}

func TestPartTrackerDeletedBeforeItRan(t *testing.T) {
	tr := liveParts()
	evs := tr.observe(capturedJobs(t, "17_qstat_f_x_deleted_queued.out"), 1795545500, nil)
	if len(evs) != 1 || evs[0].State != "failed" || evs[0].ExitStatus != nil || evs[0].Job != "dispatch-p4" {
		t.Fatalf("deleted queued part: %+v", evs)
	}
}

// A job named like a part (la.<job>.<part>) that the agent did not submit
// is not a part: only the ids the agent dispatched are followed.
func TestPartTrackerFollowsOnlyWhatItDispatched(t *testing.T) {
	tr := &partTracker{dispatched: map[string]string{"4.vm": "dispatch-p1"}}
	evs := tr.observe(capturedJobs(t, "11_qstat_f_x_all_running.out"), 1795545030, nil)
	if len(evs) != 1 || evs[0].LocalID != "4.vm" {
		t.Fatalf("events %+v, want 4.vm's only (7.vm is named la.dispatch-f1.0 but was not dispatched by this agent)", evs)
	}
}

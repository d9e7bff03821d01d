package agent

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"lookahead/torque"
)

// capturedExec lists the jobs of one live-captured qstat -f -x output.
type capturedExec struct {
	t    *testing.T
	file string
}

func (c *capturedExec) Jobs(context.Context) ([]torque.BatchJob, []string, error) {
	return capturedJobs(c.t, c.file), []string{"qstat", "-f", "-x"}, nil
}

func (c *capturedExec) Submit(context.Context, torque.QsubSpec) (string, []string, error) {
	return "", nil, errors.New("not in this capture")
}

func (c *capturedExec) Delete(context.Context, string) ([]string, error) {
	return nil, errors.New("not in this capture")
}

// An agent restarted on its part state does not send "dispatched part
// finished" again for parts it had reported (Torque still lists them
// completed): what was reported is written once the NATS server has it.
// Live: a restarted agent re-sent every finished part (grid-parts.json
// was empty).
func TestRestartedAgentDoesNotReportPartsAgain(t *testing.T) {
	nc, sub := eventsOf(t, "dispatch-p1")
	file := filepath.Join(t.TempDir(), "dispatched-parts.json")
	exec := &capturedExec{t: t, file: "24_qstat_f_x_all_final.out"}
	newAgent := func() *Agent {
		a, err := New(Config{Site: "vm", PartState: file}, Deps{Conn: nc, Snapshotter: TorqueSnapshotter{},
			Engine: BuiltinEngine{}, Executor: exec})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	first := newAgent()
	first.resMu.Lock()
	first.recordDispatched("4.vm", "dispatch-p1") // what Dispatch records when qsub answers
	first.resMu.Unlock()
	first.followParts(context.Background(), 1795545060)
	if ev := nextEvent(t, sub); ev.State != "finished" || ev.LocalID != "4.vm" {
		t.Fatalf("first agent: %+v", ev)
	}
	restarted := newAgent()
	restarted.followParts(context.Background(), 1795545120)
	if msg, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("restarted agent reported again: %s", msg.Data)
	}
	// The restarted agent still knows the part as its own.
	if job, ok := restarted.parts.PartOf("4.vm"); !ok || job != "dispatch-p1" {
		t.Fatalf("restarted agent: 4.vm is %q %v, want dispatch-p1's part", job, ok)
	}
}

// racingExec lists no job the first time and, while it lists, lets a
// dispatch record its part 4.vm if the request lock is free (as a dispatch
// request arriving during the listing would); else that dispatch runs
// once the listing is done (late). Later listings are the capture.
type racingExec struct {
	capturedExec
	a     *Agent
	calls int
	late  bool
}

func (r *racingExec) Jobs(ctx context.Context) ([]torque.BatchJob, []string, error) {
	r.calls++
	if r.calls > 1 {
		return r.capturedExec.Jobs(ctx)
	}
	if r.a.resMu.TryLock() {
		r.a.recordDispatched("4.vm", "dispatch-p1")
		r.a.resMu.Unlock()
	} else {
		r.late = true
	}
	return nil, []string{"qstat", "-f", "-x"}, nil
}

// A part dispatched while the follower lists the batch system's jobs is
// missing from that listing; it is still followed, not forgotten as a
// part no longer listed. Seen on the live Slurm grid test under load: the
// forgotten part ran and finished, was never reported, and the broker
// failed its job as not started within the start grace.
func TestPartDispatchedDuringAListingIsFollowed(t *testing.T) {
	nc, sub := eventsOf(t, "dispatch-p1")
	exec := &racingExec{capturedExec: capturedExec{t: t, file: "24_qstat_f_x_all_final.out"}}
	a, err := New(Config{Site: "vm"}, Deps{Conn: nc, Snapshotter: TorqueSnapshotter{}, Engine: BuiltinEngine{}, Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	exec.a = a
	a.followParts(context.Background(), 1795545000)
	if exec.late {
		a.resMu.Lock()
		a.recordDispatched("4.vm", "dispatch-p1")
		a.resMu.Unlock()
	}
	a.followParts(context.Background(), 1795545060)
	if ev := nextEvent(t, sub); ev.State != "finished" || ev.LocalID != "4.vm" {
		t.Fatalf("the part dispatched during a listing: %+v, want 4.vm finished", ev)
	}
}

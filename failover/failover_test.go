package failover

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"lookahead/broker/daemon"
	"lookahead/wire"
)

// TestEachFaultOnce runs two brokers and two agents on a three-server
// cluster and injects each fault once: the active broker killed after a
// commit's intent, after some of its reserves, after its outcome; paused
// past its lease and resumed; the job stream's leader server stopped; a
// server restarted with its store. After each, the invariants hold
// (grid.check).
func TestEachFaultOnce(t *testing.T) {
	g := newGrid(t)
	g.startAgent("alpha")
	g.startAgent("beta")
	g.startBroker("b1")
	g.startBroker("b2")
	g.active(30 * time.Second)
	g.waitSites()

	for _, point := range []string{"intent", "answer", "outcome"} {
		took := g.killDuring(point)
		t.Logf("killed the active broker at %s: a standby took over in %v", point, took.Round(time.Millisecond))
		g.check("a kill at " + point)
		g.cancelAll()
	}
	t.Logf("paused the active broker past its lease: a standby took over in %v", g.pauseDuringCommit().Round(time.Millisecond))
	g.check("a pause past the lease")
	g.cancelAll()

	// From here on no fault restarts the brokers itself: one that exits
	// (losing the lease while the servers elect) is started again, as
	// systemd does.
	g.supervise = true
	leader := g.cl.StreamLeader(wire.JobStream)
	if leader < 0 {
		t.Fatal("no server leads the job stream")
	}
	g.cl.Stop(leader)
	t.Logf("stopped server n%d, the job stream's leader", leader+1)
	g.submit(3)
	g.submit(10)
	g.check("the job stream's leader server stopped")
	if err := g.cl.Start(leader); err != nil {
		t.Fatal(err)
	}
	g.cancelAll()

	restart := (leader + 1) % g.cl.Size()
	g.cl.Stop(restart)
	if err := g.cl.Start(restart); err != nil {
		t.Fatal(err)
	}
	g.submit(3)
	g.submit(10)
	g.check("a server restarted with its store")
}

// TestLongRun repeats each broker kill and the pause
// LOOKAHEAD_FAILOVER_ROUNDS times (at least 20 for docs/broker.md) and
// reports the takeover times: from the kill to the standby's term begun.
func TestLongRun(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("LOOKAHEAD_FAILOVER_ROUNDS"))
	if rounds <= 0 {
		t.Skip("set LOOKAHEAD_FAILOVER_ROUNDS=20 to run it")
	}
	g := newGrid(t)
	g.startAgent("alpha")
	g.startAgent("beta")
	g.startBroker("b1")
	g.startBroker("b2")
	g.active(30 * time.Second)
	g.waitSites()
	takeovers := map[string][]time.Duration{}
	for i := range rounds {
		for _, point := range []string{"intent", "answer", "outcome"} {
			takeovers[point] = append(takeovers[point], g.killDuring(point))
			g.check(fmt.Sprintf("round %d, a kill at %s", i+1, point))
			g.cancelAll()
		}
		takeovers["pause"] = append(takeovers["pause"], g.pauseDuringCommit())
		g.check(fmt.Sprintf("round %d, a pause", i+1))
		g.cancelAll()
	}
	for _, k := range []string{"intent", "answer", "outcome", "pause"} {
		var sum, worst time.Duration
		for _, d := range takeovers[k] {
			sum += d
			worst = max(worst, d)
		}
		t.Logf("%-8s %d takeovers: mean %v, max %v", k, len(takeovers[k]), (sum / time.Duration(len(takeovers[k]))).Round(10*time.Millisecond), worst.Round(10*time.Millisecond))
	}
}

// killDuring arms the fault point, submits a one-site and a two-site job,
// waits for the active broker to die there (its process gone: connection
// closed) and for the standby to take over, then starts the killed broker
// again as a standby. It returns the takeover time.
func (g *grid) killDuring(point string) time.Duration {
	g.t.Helper()
	old := g.active(30 * time.Second)
	g.fault.Store(point)
	g.submit(3)
	g.submit(10)
	select {
	case err := <-old.done:
		old.done <- err
		if !errors.Is(err, daemon.ErrCrashed) {
			g.t.Fatalf("broker %s ended with %v, want the injected crash at %s", old.name, err, point)
		}
	case <-time.After(60 * time.Second):
		g.t.Fatalf("broker %s never reached fault point %s", old.name, point)
	}
	old.nc.Close()
	next := g.active(30 * time.Second)
	took := time.Since(time.Unix(0, g.killed.Load()))
	if next.name == old.name {
		g.t.Fatalf("the killed broker %s is still active", old.name)
	}
	g.startBroker(old.name)
	return took
}

// pauseDuringCommit stops the active broker after a commit's intent, its
// lease renewals with it, until the standby has taken over; then resumes
// it. It must step down (its reserve fenced by the sites, its outcome
// refused by the job stream). It returns the takeover time.
func (g *grid) pauseDuringCommit() time.Duration {
	g.t.Helper()
	old := g.active(30 * time.Second)
	g.mu.Lock()
	g.pause, g.paused = make(chan struct{}), make(chan struct{})
	g.mu.Unlock()
	g.fault.Store("pause")
	g.submit(3)
	g.submit(10)
	select {
	case <-g.paused:
	case <-time.After(60 * time.Second):
		g.t.Fatal("the active broker never paused")
	}
	var next *brokerRun
	for next == nil || next.name == old.name {
		next = g.active(30 * time.Second)
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(time.Unix(0, g.killed.Load()))
	close(g.pause)
	g.mu.Lock()
	g.paused = nil
	g.mu.Unlock()
	select {
	case err := <-old.done:
		old.done <- err
		if !errors.Is(err, daemon.ErrSteppedDown) {
			g.t.Fatalf("the resumed broker %s ended with %v, want a step-down", old.name, err)
		}
	case <-time.After(30 * time.Second):
		g.t.Fatalf("the resumed broker %s did not step down", old.name)
	}
	old.nc.Close()
	g.startBroker(old.name)
	return took
}

// cancelAll cancels every active job, so the sites are free for the next
// fault, and waits for the releases.
func (g *grid) cancelAll() {
	g.t.Helper()
	st := g.settle(60 * time.Second)
	for _, j := range st.Jobs {
		if j.State != wire.JobWaiting && j.State != wire.JobReserved {
			continue
		}
		g.cancel(j.Job.ID)
	}
	g.settle(60 * time.Second)
}

// cancel cancels a job; a job whose commit began meanwhile (a cycle ran
// after settle) is answered "a commit is in progress", and asked again
// once it settled: which of the two comes first is the machine's timing,
// not what the test checks.
func (g *grid) cancel(id string) {
	g.t.Helper()
	var rep wire.CancelReply
	var err error
	for try := 0; try < 10; try++ {
		rep = wire.CancelReply{}
		err = g.request(wire.BrokerUserSubject(wire.VerbCancel, "alice"), wire.CancelRequest{Type: wire.TypeCancel, Job: id}, &rep, 10*time.Second)
		if err == nil && (rep.Code == wire.CodeOK || !strings.Contains(rep.Message, "commit is in progress")) {
			break
		}
		g.settle(60 * time.Second)
	}
	if err != nil || rep.Code != wire.CodeOK {
		g.t.Fatalf("cancel %s: %+v %v", id, rep, err)
	}
}

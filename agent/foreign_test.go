package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/torque"
	"lookahead/wire"
)

// listReserver lists fixed reservations (set with set) and names their
// jobs as MauiReserver does.
type listReserver struct {
	mu  sync.Mutex
	res []wire.Reservation
}

func (l *listReserver) set(rs ...wire.Reservation) { l.mu.Lock(); l.res = rs; l.mu.Unlock() }
func (l *listReserver) Reserve(context.Context, agent.ReserveSpec) (agent.Reserved, error) {
	return agent.Reserved{}, nil
}
func (l *listReserver) Release(context.Context, string) (agent.Released, error) {
	return agent.Released{}, nil
}
func (l *listReserver) List(context.Context) ([]wire.Reservation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wire.Reservation(nil), l.res...), nil
}
func (l *listReserver) JobOf(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, "la.")
	if i := strings.LastIndexByte(rest, '.'); ok && i > 0 {
		return rest[:i], true
	}
	return "", false
}

// jobsSnapshot is a one-node site with the jobs set last.
type jobsSnapshot struct {
	mu   sync.Mutex
	jobs []forecast.LocalJob
}

func (s *jobsSnapshot) set(jobs ...forecast.LocalJob) { s.mu.Lock(); s.jobs = jobs; s.mu.Unlock() }
func (s *jobsSnapshot) Snapshot(context.Context) (forecast.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return forecast.Snapshot{Site: "vm", Taken: t0, Jobs: append([]forecast.LocalJob(nil), s.jobs...),
		Nodes: []forecast.SnapshotNode{{Name: "vm", Procs: 8, State: []string{forecast.NodeFree}, Speed: 1}}}, nil
}

// Issue 35: under foreign_jobs: hold, a queued job of the reservation's
// user charged to its binding account (7.vm) gets an operator hold at the
// next build — not the hand-submitted part, not bob's job with the
// account, not alice's own other job — and the hold is released once the
// grid job holds no reservation here. qhold/qrls run against Torque
// 6.1.3's captured answers (torque/testdata/torque-6.1.3/live-hold).
func TestQueuedForeignJobIsHeldThenReleased(t *testing.T) {
	run, err := torque.NewFixtureRunner("../torque/testdata/torque-6.1.3/live-hold")
	if err != nil {
		t.Fatal(err)
	}
	snap, res := &jobsSnapshot{}, &listReserver{}
	queued := func(id, user, acct, name string) forecast.LocalJob {
		return forecast.LocalJob{ID: id, User: user, Account: acct, Name: name, State: forecast.JobQueued, Procs: 1,
			Walltime: 120, Submitted: t0 - 10, Reservation: "la.g9.0"}
	}
	snap.set(queued("7.vm", "alice", "la.acct9", "foreign1"), queued("10.vm", "alice", "la.acct9", "la.g9.0"),
		queued("11.vm", "bob", "la.acct9", "bobtry"), forecast.LocalJob{ID: "12.vm", User: "alice", Account: "proj1", State: forecast.JobQueued, Procs: 1, Walltime: 60})
	res.set(wire.Reservation{ID: "la.g9.0", Job: "g9", Start: t0 + 600, End: t0 + 1200, Identity: wire.Identity{User: "alice", Account: "proj1"},
		Submit: "-A la.acct9 -W x=FLAGS:ADVRES:la.g9.0 -N la.g9.0"})
	nc := startNATS(t)
	cfg := testConfig("vm")
	cfg.Refresh, cfg.ForecastTTL = time.Hour, 3*time.Hour
	a, err := agent.New(cfg, agent.Deps{Conn: nc, Snapshotter: snap, Reserver: res, Holder: torque.NewBatch(run, torque.BatchConfig{Site: "vm"}),
		Engine: agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()},
		Now:    func() time.Time { return time.Unix(t0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	js := mustJS(t, nc)
	held := waitAudit(t, a, js, "foreign-hold", 1)
	if held[0].Job != "g9" || strings.Join(held[0].Command, " ") != "qhold -h o 7.vm" || held[0].Code != wire.CodeOK {
		t.Fatalf("hold: %+v", held[0])
	}
	// The grid job's reservation is gone; 7.vm is held (H): released.
	held7 := queued("7.vm", "alice", "la.acct9", "foreign1")
	held7.State = forecast.JobHeld
	snap.set(held7)
	res.set()
	released := waitAudit(t, a, js, "foreign-release", 1)
	if strings.Join(released[0].Command, " ") != "qrls -h o 7.vm" || released[0].Code != wire.CodeOK {
		t.Fatalf("release: %+v", released[0])
	}
	if hs := auditOf(t, js, "foreign-hold"); len(hs) != 1 {
		for _, h := range hs {
			t.Logf("%+v", h)
		}
		t.Fatalf("%d holds, want 1 (7.vm only)", len(hs))
	}
}

// waitAudit notifies the agent (a build) until the audit stream holds n
// records of action, and returns them.
func waitAudit(t *testing.T, a *agent.Agent, js jetstream.JetStream, action string, n int) []wire.AuditRecord {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got := auditOf(t, js, action); len(got) >= n {
			return got
		}
		a.Notify("test")
	}
	t.Fatalf("no %d %s audit records", n, action)
	return nil
}

func auditOf(t *testing.T, js jetstream.JetStream, action string) []wire.AuditRecord {
	t.Helper()
	if _, err := js.Stream(context.Background(), wire.AuditStream); err != nil {
		return nil // not created yet (the agent makes it as it starts)
	}
	var out []wire.AuditRecord
	for _, r := range auditRecords(t, js) {
		if r.Action == action {
			out = append(out, r)
		}
	}
	return out
}

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/wire"
)

// haStatuses gathers the brokers' own statuses (no queue group) that
// arrive within a second.
func haStatuses(t *testing.T, nc *nats.Conn) map[string]wire.HAStatus {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(wire.BrokerHASubject, inbox, nil); err != nil {
		t.Fatal(err)
	}
	out := map[string]wire.HAStatus{}
	for {
		m, err := sub.NextMsg(time.Second)
		if err != nil {
			return out
		}
		var st wire.HAStatus
		if err := json.Unmarshal(m.Data, &st); err != nil {
			t.Fatal(err)
		}
		out[st.Name] = st
	}
}

// waitServing waits until b has begun its term and serves the grid's
// endpoints, its step-down among them (its Ready). Its epoch alone is not
// enough: the epoch is set as the term begins, before the service and the
// step-down subscription exist, so a request sent on seeing it can find
// no responder (seen under load).
func waitServing(t *testing.T, b *Broker, within time.Duration) {
	t.Helper()
	select {
	case <-b.Ready():
	case <-time.After(within):
		t.Fatalf("broker %s never served as the active one (epoch %d)", b.cfg.Name, b.Epoch())
	}
}

// TestStandbyServesOnlyItsStatusAndTakesOverOnStepDown: of two brokers
// one is active and serves the grid; the other answers only its own
// status, naming the active one. A step-down hands over at once, to a
// newer epoch.
func TestStandbyServesOnlyItsStatusAndTakesOverOnStepDown(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	e.publish("alpha", 1, 4, 8, 1)
	first := e.startBroker(func(c *Config) { c.Name = "b1" })
	var second *Broker
	done2 := make(chan error, 1)
	{
		cfg := first.b.cfg
		cfg.Name = "b2"
		b, err := New(connect(t, e.srv), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(func() { cancel(); <-done2 })
		go func() { done2 <- b.Run(ctx) }()
		second = b
	}
	var sts map[string]wire.HAStatus
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if sts = haStatuses(t, e.nc); sts["b2"].Leader != nil {
			break
		}
	}
	e1 := first.b.Epoch()
	if sts["b1"].Role != wire.RoleActive || sts["b1"].Epoch != e1 || e1 == 0 {
		t.Fatalf("b1: %+v, want active at epoch %d", sts["b1"], e1)
	}
	if sts["b2"].Role != wire.RoleStandby || sts["b2"].Leader == nil || sts["b2"].Leader.Broker != "b1" {
		t.Fatalf("b2: %+v, want a standby naming b1", sts["b2"])
	}
	// Only the active broker serves the grid's endpoints.
	for range 5 {
		var sites wire.SitesReply
		msg, err := e.nc.Request(wire.BrokerSubject(wire.VerbSites), nil, 5*time.Second)
		if err != nil || json.Unmarshal(msg.Data, &sites) != nil {
			t.Fatalf("sites: %v", err)
		}
		if sites.Leader == nil || sites.Leader.Broker != "b1" || sites.Leader.Epoch != e1 {
			t.Fatalf("sites answered by %+v, want b1 at epoch %d", sites.Leader, e1)
		}
	}
	if ok, why := second.Healthy(); ok || why == "" {
		t.Fatalf("a standby is ready: %v %q", ok, why)
	}

	stepDown := func(req string) wire.StepDownReply {
		t.Helper()
		msg, err := e.nc.Request(wire.BrokerSubject(wire.VerbStepDown), []byte(req), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var rep wire.StepDownReply
		if err := json.Unmarshal(msg.Data, &rep); err != nil {
			t.Fatalf("step-down reply %s: %v", msg.Data, err)
		}
		return rep
	}
	// A step-down names the term it ends: none, or another, is refused.
	if rep := stepDown(`{"type":"step-down.v1"}`); rep.Code != wire.CodeInvalid || !strings.Contains(rep.Message, "names no epoch") {
		t.Fatalf("step-down naming no epoch: %+v", rep)
	}
	if rep := stepDown(fmt.Sprintf(`{"type":"step-down.v1","epoch":%d}`, e1+1)); rep.Code != wire.CodeStale {
		t.Fatalf("step-down of another epoch: %+v", rep)
	}
	if first.b.Epoch() != e1 {
		t.Fatal("b1 stepped down on a refused request")
	}
	ask := fmt.Sprintf(`{"type":"step-down.v1","epoch":%d}`, e1)
	if rep := stepDown(ask); rep.Code != wire.CodeOK || rep.Broker != "b1" || rep.Epoch != e1 {
		t.Fatalf("step-down reply %+v", rep)
	}
	select {
	case err := <-first.done:
		first.done <- err
		if !errors.Is(err, ErrSteppedDown) {
			t.Fatalf("b1 after its step-down: %v, want ErrSteppedDown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b1 did not step down")
	}
	waitServing(t, second, time.Minute)
	if second.Epoch() <= e1 {
		t.Fatalf("b2's epoch %d is not newer than b1's %d", second.Epoch(), e1)
	}
	// The same request again (a retry, a replay) does not depose b2.
	if rep := stepDown(ask); rep.Code != wire.CodeStale || rep.Broker != "b2" {
		t.Fatalf("the repeated step-down: %+v, want refused by b2", rep)
	}
}

// TestPausedBrokerIsFenced: the active broker stops after recording a
// commit's intent and stays stopped past its lease; the standby takes
// over, rolls the commit back (its release carries the new epoch) and
// reserves the job itself. When the old broker resumes, it sends nothing:
// its lease ran out, which every side effect checks (before issue 34 its
// reserve went out, to be refused fenced by the site); it steps down, and
// the site holds the job's reservation from the new epoch only.
func TestPausedBrokerIsFenced(t *testing.T) {
	e := newEnv(t)
	site := e.startSite("alpha")
	e.publish("alpha", 1, 4, 8, 1)
	resumeCommit, resumeLease := make(chan struct{}), make(chan struct{})
	var once sync.Once
	paused := make(chan struct{})
	old := e.startBrokerFaults(Faults{
		LeasePause: func() {
			select {
			case <-paused:
				<-resumeLease
			default:
			}
		},
		Point: func(p string) bool {
			if p == "intent" {
				once.Do(func() { close(paused) })
				<-resumeCommit
			}
			return false
		},
	}, func(c *Config) { c.Name = "b1" })
	e1 := old.b.Epoch()
	e.waitSites(old.b, 1)
	rep := submit(t, old.b, "k1", job(8, 3600, 2))
	cycled := make(chan error, 1)
	go func() { cycled <- old.b.Cycle(context.Background()) }()
	<-paused

	next := e.startBroker(func(c *Config) { c.Name = "b2" }) // ready once active: after b1's lease ran out
	e2 := next.b.Epoch()
	if e2 <= e1 {
		t.Fatalf("epochs: b1 %d, b2 %d", e1, e2)
	}
	if st := status(t, next.b, rep.Job); st.State != wire.JobWaiting {
		t.Fatalf("b2 found %s %q, want the half-done commit rolled back", st.State, st.Message)
	}
	e.clock.Add(10 * time.Second) // the rollback's releases are due
	e.waitSites(next.b, 1)
	if err := next.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := status(t, next.b, rep.Job); st.State != wire.JobReserved {
		t.Fatalf("b2 did not reserve the job: %s %q", st.State, st.Message)
	}

	site.mu.Lock()
	before := site.calls["reserve"] + site.calls["release"]
	site.mu.Unlock()
	close(resumeCommit) // b1 goes on with its commit, its lease still "paused"
	if err := <-cycled; err == nil {
		t.Fatal("b1's cycle succeeded after it lost its lease")
	}
	close(resumeLease)
	select {
	case err := <-old.done:
		old.done <- err
		if !errors.Is(err, ErrSteppedDown) {
			t.Fatalf("b1: %v, want ErrSteppedDown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b1 did not step down")
	}
	site.mu.Lock()
	after, epoch := site.calls["reserve"]+site.calls["release"], site.epochs[rep.Job]
	site.mu.Unlock()
	if after != before {
		t.Errorf("b1 sent %d request(s) after it resumed past its lease, want none", after-before)
	}
	if epoch != e2 {
		t.Errorf("the job's reservation is from epoch %d, want b2's %d", epoch, e2)
	}
	if got := site.held()[rep.Job]; len(got) != 1 {
		t.Errorf("site holds %v for the job", got)
	}
	if a := next.b.Audit(context.Background(), false); len(a.Findings) != 0 {
		t.Errorf("audit: %+v", a.Findings)
	}
}

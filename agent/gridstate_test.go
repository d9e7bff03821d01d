package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/forecast"
	"lookahead/internal/natstest"
	"lookahead/maui"
	"lookahead/torque"
	"lookahead/wire"
)

// eventsOf starts a NATS server and follows grid job job's events of
// site vm on it, answering each as the broker does (taken).
func eventsOf(t *testing.T, job string) (*nats.Conn, *brokerEvents) {
	t.Helper()
	_, nc := natstest.Start(t)
	ev := &brokerEvents{ch: make(chan *nats.Msg, 64)}
	ack, _ := json.Marshal(wire.JobEventAck{Type: wire.TypeJobEventAck, Code: wire.CodeOK})
	sub, err := nc.Subscribe(wire.JobEventSubject("vm", job), func(m *nats.Msg) {
		m.Respond(ack)
		ev.ch <- m
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return nc, ev
}

// brokerEvents are the job events a stand-in broker took.
type brokerEvents struct{ ch chan *nats.Msg }

// NextMsg is the next event taken within d.
func (b *brokerEvents) NextMsg(d time.Duration) (*nats.Msg, error) {
	select {
	case m := <-b.ch:
		return m, nil
	case <-time.After(d):
		return nil, nats.ErrTimeout
	}
}

func nextEvent(t *testing.T, sub *brokerEvents) wire.JobEvent {
	t.Helper()
	msg, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var ev wire.JobEvent
	if err := json.Unmarshal(msg.Data, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestGridPartEndedWhileAgentDown, on a live Torque 6.1.3 + Maui 3.3.1
// capture (testdata/torque-6.1.3-live-foreign): alice's part 2.vm
// (qsub -N la.h1.0 -A la.acct0 -W x=FLAGS:ADVRES:la.h1.0) runs in grid
// job h1's reservation next to her stray 0.vm (-A la.acct0, no part
// name). The agent reports h1 started (and 0.vm foreign) and stops; 2.vm
// ends. A new agent on the same state file reports h1 finished at its
// first snapshot — whether 2.vm is still listed completed
// (keep_completed) or gone — at the end the accounting log's E record
// gives (1795618790; the stray ended later, at 1795618799, and does not
// count), and only once.
func TestGridPartEndedWhileAgentDown(t *testing.T) {
	const dir = "testdata/torque-6.1.3-live-foreign"
	nc, sub := eventsOf(t, "h1")
	for _, after := range []struct {
		name string
		snap forecast.Snapshot
	}{
		{"completed job listed", qstatSnapshotAt(t, dir+"/08_qstat_f_x_final.out")},
		{"completed job gone", forecast.Snapshot{Site: "vm"}},
	} {
		t.Run(after.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "grid-parts.json")
			newAgent := func() *Agent {
				a, err := New(Config{Site: "vm", GridState: file}, Deps{Conn: nc, Snapshotter: TorqueSnapshotter{},
					Engine: BuiltinEngine{}, Reserver: MauiReserver{},
					JobEnds: torque.AccountingEnds{Dir: dir + "/accounting", Location: time.UTC}})
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			first := newAgent()
			first.reportGridJobs(context.Background(), foreignSnapshot(t, dir), 1795618760)
			if ev := nextEvent(t, sub); ev.Job != "h1" || ev.State != "started" || ev.Site != "vm" {
				t.Fatalf("first agent: %+v", ev)
			}
			if ev := nextEvent(t, sub); ev.State != "foreign" || ev.LocalID != "0.vm" {
				t.Fatalf("first agent, the stray job: %+v, want foreign 0.vm", ev)
			}
			restarted := newAgent()
			restarted.reportGridJobs(context.Background(), after.snap, 1795618900)
			if ev := nextEvent(t, sub); ev.Job != "h1" || ev.State != "finished" || ev.Time != 1795618790 {
				t.Fatalf("restarted agent: %+v, want h1 finished at 2.vm's accounting end 1795618790", ev)
			}
			restarted.reportGridJobs(context.Background(), after.snap, 1795618960)
			again := newAgent()
			again.reportGridJobs(context.Background(), after.snap, 1795619020)
			if msg, err := sub.NextMsg(300 * time.Millisecond); err == nil {
				t.Fatalf("reported again: %s", msg.Data)
			}
		})
	}
}

// A job submitted by hand into a lookahead reservation without the part
// name (live capture: 70.vm "handpart" in la.failpart.0, exit 3) is not
// the grid job's part: it is reported foreign, and its failure is never
// reported as the grid job's.
func TestHandSubmittedJobWithoutPartNameIsForeign(t *testing.T) {
	nc, sub := eventsOf(t, "failpart")
	const dir = "testdata/torque-6.1.3-live-fail"
	a, err := New(Config{Site: "vm", GridState: filepath.Join(t.TempDir(), "grid-parts.json")}, Deps{Conn: nc,
		Snapshotter: TorqueSnapshotter{}, Engine: BuiltinEngine{}, Reserver: MauiReserver{},
		JobEnds: torque.AccountingEnds{Dir: dir + "/accounting", Location: time.UTC}})
	if err != nil {
		t.Fatal(err)
	}
	a.reportGridJobs(context.Background(), qstatSnapshotAt(t, dir+"/03_qstat_f_x_t_running.out"), 1795568210)
	if ev := nextEvent(t, sub); ev.State != "foreign" || ev.LocalID != "70.vm" || !strings.Contains(ev.Message, ForeignFinding) {
		t.Fatalf("first report: %+v, want 70.vm foreign", ev)
	}
	a.reportGridJobs(context.Background(), forecast.Snapshot{Site: "vm"}, 1795568300)
	if msg, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("the foreign job's end was reported: %s", msg.Data)
	}
}

// foreignSnapshot is the live-foreign capture's running snapshot with the
// site's holds, as the HoldingSnapshotter makes it: Maui's reservations
// (captured showres, showres -n, diagnose -r) bind the stray 0.vm, which
// names no reservation, to la.h1.0 by its user and binding account.
func foreignSnapshot(t *testing.T, dir string) forecast.Snapshot {
	t.Helper()
	r, err := maui.NewFixtureRunner(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dir + "/01_NOW.txt")
	if err != nil {
		t.Fatal(err)
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(sec, 0)
	holds, err := MauiReserver{Runner: r, Config: maui.ClientConfig{Location: time.UTC, Now: func() time.Time { return now }}}.Holds(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	snap := qstatSnapshotAt(t, dir+"/01_qstat_f_x_running.out")
	snap.Nodes = []forecast.SnapshotNode{{Name: "vm", Procs: 8}} // the capture host: one node, np=8
	return WithHolds(snap, holds)
}

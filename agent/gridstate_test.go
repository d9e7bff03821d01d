package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/forecast"
	"lookahead/internal/natsembed"
	"lookahead/maui"
	"lookahead/torque"
	"lookahead/wire"
)

// gridAgent is an agent of site vm whose reserver names the captured
// reservation grid1.0's grid job ("rid1", prefix "g"), publishing job
// events on nc, with its grid part state in file.
func gridAgent(t *testing.T, nc *nats.Conn, file string) *Agent {
	t.Helper()
	a, err := New(Config{Site: "vm", GridState: file}, Deps{Conn: nc, Snapshotter: TorqueSnapshotter{},
		Engine: BuiltinEngine{}, Reserver: MauiReserver{Config: maui.ClientConfig{Prefix: "g"}},
		JobEnds: torque.AccountingEnds{Dir: "testdata/torque-6.1.3/accounting", Location: time.UTC}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// eventsOf starts a NATS server and follows grid job job's events of
// site vm on it.
func eventsOf(t *testing.T, job string) (*nats.Conn, *nats.Subscription) {
	t.Helper()
	srv, err := natsembed.Start(natsembed.Options{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	sub, err := nc.SubscribeSync(wire.JobEventSubject("vm", job))
	if err != nil {
		t.Fatal(err)
	}
	return nc, sub
}

func nextEvent(t *testing.T, sub *nats.Subscription) wire.JobEvent {
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

// TestGridPartEndedWhileAgentDown: on the captured Torque 6.1.3 session,
// the agent reports rid1's part (5.vm in reservation grid1.0) started and
// stops; 5.vm ends. A new agent on the same state file reports the part
// finished at its first snapshot — whether 5.vm is still listed completed
// (keep_completed) or gone — at the end the accounting log's E record
// gives, and only once.
func TestGridPartEndedWhileAgentDown(t *testing.T) {
	nc, sub := eventsOf(t, "rid1")
	for _, after := range []struct {
		name string
		snap forecast.Snapshot
	}{
		{"completed job listed", qstatSnapshot(t, "27_qstat_f_x_final.out")},
		{"completed job gone", forecast.Snapshot{Site: "vm"}},
	} {
		t.Run(after.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "grid-parts.json")
			first := gridAgent(t, nc, file)
			first.reportGridJobs(context.Background(), qstatSnapshot(t, "15_qstat_f_x_all.out"), 1795317230)
			if ev := nextEvent(t, sub); ev.Job != "rid1" || ev.State != "started" || ev.Site != "vm" {
				t.Fatalf("first agent: %+v", ev)
			}
			restarted := gridAgent(t, nc, file)
			restarted.reportGridJobs(context.Background(), after.snap, 1795320000)
			if ev := nextEvent(t, sub); ev.Job != "rid1" || ev.State != "finished" || ev.Time != 1795317278 {
				t.Fatalf("restarted agent: %+v, want rid1 finished at 5.vm's accounting end 1795317278", ev)
			}
			restarted.reportGridJobs(context.Background(), after.snap, 1795320060)
			again := gridAgent(t, nc, file)
			again.reportGridJobs(context.Background(), after.snap, 1795320120)
			if msg, err := sub.NextMsg(300 * time.Millisecond); err == nil {
				t.Fatalf("reported again: %s", msg.Data)
			}
		})
	}
}

// A part submitted by hand into a lookahead reservation that fails (live
// capture: 70.vm in la.failpart.0, exit 3) is reported failed, with the
// accounting log's exit status and end, not finished.
func TestHandSubmittedPartFailureFromAccounting(t *testing.T) {
	nc, sub := eventsOf(t, "failpart")
	const dir = "testdata/torque-6.1.3-live-fail"
	a, err := New(Config{Site: "vm", GridState: filepath.Join(t.TempDir(), "grid-parts.json")}, Deps{Conn: nc,
		Snapshotter: TorqueSnapshotter{}, Engine: BuiltinEngine{}, Reserver: MauiReserver{},
		JobEnds: torque.AccountingEnds{Dir: dir + "/accounting", Location: time.UTC}})
	if err != nil {
		t.Fatal(err)
	}
	a.reportGridJobs(context.Background(), qstatSnapshotAt(t, dir+"/03_qstat_f_x_t_running.out"), 1795568210)
	if ev := nextEvent(t, sub); ev.State != "started" {
		t.Fatalf("first report: %+v", ev)
	}
	a.reportGridJobs(context.Background(), forecast.Snapshot{Site: "vm"}, 1795568300)
	ev := nextEvent(t, sub)
	if ev.State != "failed" || ev.ExitStatus == nil || *ev.ExitStatus != 3 || ev.Time != 1795568238 || ev.LocalID != "70.vm" ||
		!strings.Contains(ev.Message, "70.vm exited with status 3") {
		t.Fatalf("end report: %+v, want failed with exit status 3 at 1795568238", ev)
	}
}

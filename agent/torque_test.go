package agent_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/torque"
	"lookahead/torque/tail"
)

// capturedTorque serves snapshots from the real Torque 4.2.10 captures
// (testdata/torque-4.2.10) as they stood at one point of the capture
// session; moving the point is the cluster changing.
type capturedTorque struct {
	t      *testing.T
	client atomic.Pointer[torque.Client]
}

func (c *capturedTorque) at(point string) {
	fr, err := torque.NewFixtureRunner(filepath.Join("testdata", "torque-4.2.10"),
		torque.FixtureAt(point), torque.FixtureAlias("qstat -f -x -t", "qstat -f -x 0.vm"))
	if err != nil {
		c.t.Fatal(err)
	}
	c.client.Store(torque.NewClient(fr, torque.ClientConfig{Site: "vm", Default: torque.NodeConfig{Speed: 1}}))
}

func (c *capturedTorque) Snapshot(ctx context.Context) (forecast.Snapshot, error) {
	return agent.TorqueSnapshotter{Client: c.client.Load()}.Snapshot(ctx)
}

func TestCapturedTorqueChangeProducesNewForecast(t *testing.T) {
	nc := startNATS(t)
	src := &capturedTorque{t: t}
	src.at("08_pbsnodes_x") // 0.vm queued
	// 0.vm was started at 1795321064 with a 2-minute walltime.
	now := func() time.Time { return time.Unix(1795321094, 0) }
	eng := agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}
	a, err := agent.New(testConfig("vm"), agent.Deps{Conn: nc, Snapshotter: src, Engine: eng, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	js, _ := jetstream.New(nc)
	kv := waitBucket(t, js)
	f1 := waitForecast(t, kv, "vm", 1)
	// Only vm is up (node02/node03 are down): it alone is offered.
	if len(f1.Nodes) != 1 || f1.Nodes[0].Name != "vm" || f1.Nodes[0].Procs != 4 {
		t.Fatalf("nodes %+v, want vm with 4 procs", f1.Nodes)
	}
	src.at("17_pbsnodes_x_running") // qrun 0.vm: it runs now
	a.Notify("test")
	f2 := waitForecast(t, kv, "vm", 2)
	if agent.Fingerprint(f1) == agent.Fingerprint(f2) {
		t.Fatal("0.vm started but the forecast did not change")
	}
	// While 0.vm runs, one of vm's 4 processors is never offered.
	if got := agent.Available(f2.Slots, f2.Generated, f2.Generated+10); got != 3 {
		t.Fatalf("vm offers %d procs while 0.vm runs, want 3", got)
	}
}

// An accounting record appended to pbs_server's day file (the real 4.2.10
// capture, written line by line into a temporary PBS_HOME) reaches the
// agent through the Torque log tailer: the job start triggers a forecast
// on the new snapshot and is scored against the start first predicted.
func TestAccountingLineTriggersForecastAndScoresStart(t *testing.T) {
	lines := strings.SplitAfter(string(must(os.ReadFile("testdata/torque-4.2.10-accounting/20261122"))), "\n")
	home := t.TempDir()
	dir := torque.LogDir(home, torque.AccountingLog)
	os.MkdirAll(dir, 0o755)
	day := filepath.Join(dir, "20261122")
	if err := os.WriteFile(day, []byte(lines[0]), 0o644); err != nil { // Q 0.vm
		t.Fatal(err)
	}
	nc := startNATS(t)
	src := &capturedTorque{t: t}
	src.at("08_pbsnodes_x")
	now := func() time.Time { return time.Unix(1795321063, 0) } // 0.vm's qtime
	eng := agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}
	a, err := agent.New(testConfig("vm"), agent.Deps{Conn: nc, Snapshotter: src, Engine: eng, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := torque.NewTailer(torque.TailerConfig{Kind: torque.AccountingLog, PBSHome: home,
		Positions: filepath.Join(t.TempDir(), "acct.pos"), Start: tail.StartBeginning, Location: time.UTC,
		PollInterval: 20 * time.Millisecond}, a.TorqueHandler())
	if err != nil {
		t.Fatal(err)
	}
	a.AddSources(tl)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	js, _ := jetstream.New(nc)
	kv := waitBucket(t, js)
	waitForecast(t, kv, "vm", 1)
	// qrun 0.vm: Torque now shows it running, and writes the S record.
	src.at("17_pbsnodes_x_running")
	f, err := os.OpenFile(day, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(lines[1])
	f.Close()
	waitForecast(t, kv, "vm", 2)
	acc := a.Status().Accuracy
	if acc.Checked != 1 || acc.Late != 1 || acc.MaxAbsFirst != 1 {
		t.Fatalf("accuracy %+v: 0.vm was predicted to start at its qtime 1795321063 and started at 1795321064", acc)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// pbs_server's scheduler notifications (the 4-byte codes of the 4.2.10
// capture: FIRST, NEW, NEW, TERM) reach the agent through the Torque
// listener over real TCP and trigger a forecast of the changed cluster
// (exact debounce counts are TestDebounceBurstCostsOneForecast's, on a
// fake clock).
func TestSchedulerNotificationsTriggerAForecast(t *testing.T) {
	nc := startNATS(t)
	src := &capturedTorque{t: t}
	src.at("08_pbsnodes_x")
	now := func() time.Time { return time.Unix(1795321063, 0) }
	eng := agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}
	a, err := agent.New(testConfig("vm"), agent.Deps{Conn: nc, Snapshotter: src, Engine: eng, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	l, err := torque.NewListener(torque.ListenerConfig{Addr: "127.0.0.1:0", Servers: []string{"127.0.0.1"},
		MaxSourcePort: 65535}, a.TorqueHandler())
	if err != nil {
		t.Fatal(err)
	}
	a.AddSources(l)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	kv := waitBucket(t, mustJS(t, nc))
	waitForecast(t, kv, "vm", 1)
	before := a.Builds()
	src.at("17_pbsnodes_x_running")
	for _, code := range [][]byte{{0, 0, 0, 0x0a}, {0, 0, 0, 1}, {0, 0, 0, 1}, {0, 0, 0, 2}} {
		conn, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(code)
		conn.Close()
	}
	waitForecast(t, kv, "vm", 2)
	if a.Builds() <= before {
		t.Fatal("no forecast built after the notifications")
	}
}

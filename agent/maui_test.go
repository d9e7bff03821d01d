package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/maui"
	"lookahead/wire"
)

// sim2Now is when the Maui sim2 reservation captures were taken.
var sim2Now = time.Date(2026, 11, 22, 3, 3, 0, 0, time.UTC)

// sim2Snapshot is the sim2 cluster (resource trace: n01..n08, 2 procs
// each) idle, as a snapshot.
type sim2Snapshot struct{}

func (sim2Snapshot) Snapshot(context.Context) (forecast.Snapshot, error) {
	s := forecast.Snapshot{Site: "sim2", Taken: sim2Now.Unix()}
	for i := 1; i <= 8; i++ {
		s.Nodes = append(s.Nodes, forecast.SnapshotNode{Name: fmt.Sprintf("n%02d", i), Procs: 2, State: []string{forecast.NodeFree}, Speed: 1})
	}
	return s, nil
}

// failingRunner fails the test if any Maui command is run.
type failingRunner struct{ t *testing.T }

func (f failingRunner) Run(_ context.Context, name string, args ...string) (maui.Result, error) {
	f.t.Errorf("ran %s %q", name, args)
	return maui.Result{}, fmt.Errorf("no command may run")
}

// Hostile identities through the whole reserve path with the real Maui
// adapter behind it: refused before any Maui command is built or run.
func TestHostileIdentitiesNeverReachMaui(t *testing.T) {
	nc := startNATS(t)
	a, err := agent.New(testConfig("sim2"), agent.Deps{Conn: nc, Snapshotter: sim2Snapshot{},
		Engine:   agent.BuiltinEngine{Horizon: time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()},
		Reserver: agent.MauiReserver{Runner: failingRunner{t}}, Now: func() time.Time { return sim2Now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitService(t, nc, "sim2")
	for _, id := range []wire.Identity{{User: "alice;rm -rf /"}, {User: "$(id)"}, {User: "-u root"}, {Group: "wheel users"},
		{Account: "acct\nroot"}, {User: "ALL"}, {Account: strings.Repeat("a", 1<<16)}, {User: "griduser", Group: "`id`"}} {
		req := wire.ReserveRequest{Type: wire.TypeReserve, Job: "g1", Site: "sim2", Start: sim2Now.Unix(), Duration: 600,
			Nodes: []wire.NodeProcs{{Node: "n01", Procs: 1}}, Identity: id}
		if got := request[wire.ReserveReply](t, nc, "sim2", wire.VerbReserve, req); got.Code != wire.CodeInvalid {
			t.Errorf("identity %.40q: %+v", id, got)
		}
	}
}

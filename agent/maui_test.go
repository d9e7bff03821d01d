package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// mauiScenario is a Maui FixtureRunner serving real captures
// (testdata/maui) for the argument vectors the agent's adapter sends, in
// order: rows with the same command line are served in turn, the last
// repeating. The outputs are the captured bytes; only the argv they are
// served for is chosen here (quoting and TASKS== differ from the capture).
func mauiScenario(t *testing.T, rows [][2]string) maui.Runner {
	t.Helper()
	dir := t.TempDir()
	var index strings.Builder
	for i, r := range rows {
		name := fmt.Sprintf("s%02d", i)
		b, err := os.ReadFile(filepath.Join("testdata", "maui", r[1]+".out"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name+".out"), b, 0o644)
		fmt.Fprintf(&index, "%s\t0\t%s\n", name, r[0])
	}
	os.WriteFile(filepath.Join(dir, "INDEX.tsv"), []byte(index.String()), 0o644)
	r, err := maui.NewFixtureRunner(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

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

// The whole reserve path against Maui's real answers: the broker's request
// on NATS becomes exactly the setres argument vector below; Maui's reply
// and its showres/diagnose -r views are parsed into the reservation; the
// audit record carries the command; a retry runs no setres.
func TestReserveRunsSetresOnCapturedMaui(t *testing.T) {
	nc := startNATS(t)
	const setres = "setres -u griduser -g grid -a gridacct -n gridres1 -s 03:03:00_11/22/2026 -d 01:00:00 -r PROCS=2 ^(n01)$"
	run := mauiScenario(t, [][2]string{
		// Before: no reservation (sim1 at iteration 11), read by the
		// agent's idempotency check and again by the adapter.
		{"showres", "sim1-iter011/showres"}, {"showres", "sim1-iter011/showres"},
		{"showres -n", "sim1-iter011/showres_n"}, {"showres -n", "sim1-iter011/showres_n"},
		{"diagnose -r", "sim1-iter011/diagnose_r"}, {"diagnose -r", "sim1-iter011/diagnose_r"},
		{setres, "sim2-setres/01_setres_gridres1"},
		// After: gridres1.0 on n01 (sim2 right after that setres).
		{"showres", "sim2-setres/03_showres"}, {"showres -n", "sim2-setres/04_showres_n"},
		{"diagnose -r", "sim2-setres/13_diagnose_r"},
	})
	counted := &countingReserver{Reserver: agent.MauiReserver{Runner: run,
		// The captured reservation is named gridres1: prefix "g" and grid
		// job "ridres1" make exactly that name.
		Config: maui.ClientConfig{Prefix: "g", Location: time.UTC, Now: func() time.Time { return sim2Now }}}}
	eng := agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}
	a, err := agent.New(testConfig("sim2"), agent.Deps{Conn: nc, Snapshotter: sim2Snapshot{}, Engine: eng,
		Reserver: counted, Now: func() time.Time { return sim2Now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitService(t, nc, "sim2")

	req := wire.ReserveRequest{Type: wire.TypeReserve, Job: "ridres1", Site: "sim2", Revision: 1,
		Start: sim2Now.Unix(), Duration: 3600, Nodes: []wire.NodeProcs{{Node: "n01", Procs: 2}},
		Identity: wire.Identity{User: "griduser", Group: "grid", Account: "gridacct"}, RequestedBy: "broker"}
	got := request[wire.ReserveReply](t, nc, "sim2", wire.VerbReserve, req)
	want := wire.Reservation{ID: "gridres1.0", Job: "ridres1", Site: "sim2", Start: sim2Now.Unix(), End: sim2Now.Unix() + 3600,
		Nodes: []wire.NodeProcs{{Node: "n01", Procs: 2}}, Identity: req.Identity, Submit: "-A gridacct -W x=FLAGS:ADVRES:gridres1.0"}
	if got.Code != wire.CodeOK || len(got.Reservations) != 1 || fmt.Sprint(got.Reservations[0]) != fmt.Sprint(want) {
		t.Fatalf("reply %+v\nwant reservation %+v", got, want)
	}
	again := request[wire.ReserveReply](t, nc, "sim2", wire.VerbReserve, req)
	if again.Code != wire.CodeOK || len(again.Reservations) != 1 || again.Reservations[0].ID != "gridres1.0" {
		t.Fatalf("retry: %+v", again)
	}
	if counted.reserves != 1 {
		t.Fatalf("%d Maui reserve calls, want 1 (the retry is answered from showres)", counted.reserves)
	}
	var cmds [][]string
	for _, rec := range auditRecords(t, mustJS(t, nc)) {
		if rec.Action == wire.VerbReserve && rec.Command != nil {
			cmds = append(cmds, rec.Command)
		}
	}
	if len(cmds) != 1 || !slices.Equal(cmds[0], strings.Split(setres, " ")) {
		t.Fatalf("audited commands %q, want exactly [%s]", cmds, setres)
	}
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

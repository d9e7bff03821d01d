package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/maui"
	"lookahead/torque"
	"lookahead/wire"
)

// captureRunner runs commands through r and, with dir set, records each
// with its output in the fixture layout (INDEX.tsv + .out/.err).
type captureRunner struct {
	r   maui.Runner
	dir string
	mu  sync.Mutex
	n   int
}

func (c *captureRunner) Run(ctx context.Context, name string, args ...string) (maui.Result, error) {
	res, err := c.r.Run(ctx, name, args...)
	if err != nil || c.dir == "" {
		return res, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	base := fmt.Sprintf("%02d_%s", c.n, filepath.Base(name))
	_ = os.WriteFile(filepath.Join(c.dir, base+".out"), res.Stdout, 0o644)
	if len(res.Stderr) > 0 {
		_ = os.WriteFile(filepath.Join(c.dir, base+".err"), res.Stderr, 0o644)
	}
	f, _ := os.OpenFile(filepath.Join(c.dir, "INDEX.tsv"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	fmt.Fprintf(f, "%s\t%d\t%s\n", base, res.ExitCode, strings.Join(append([]string{name}, args...), " "))
	f.Close()
	return res, nil
}

// liveAgentSite is where the agent-level reservation scenario runs: the
// live site (LOOKAHEAD_LIVE=1, commands recorded into
// LOOKAHEAD_AGENT_CAPTURE) or, by default, the recording of it in
// testdata/maui/live-agent with its clock (NOW.txt).
func liveAgentSite(t *testing.T) (maui.Runner, time.Time) {
	if os.Getenv("LOOKAHEAD_LIVE") == "1" {
		dir := os.Getenv("LOOKAHEAD_AGENT_CAPTURE")
		now := time.Now().Truncate(time.Second)
		if dir != "" {
			_ = os.WriteFile(filepath.Join(dir, "NOW.txt"), []byte(strconv.FormatInt(now.Unix(), 10)+"\n"), 0o644)
		}
		run := maui.NewExecRunner(maui.ExecConfig{BinDir: "/usr/local/maui/bin", HomeDir: "/var/spool/maui"})
		return &captureRunner{r: run, dir: dir}, now
	}
	b, err := os.ReadFile("testdata/maui/live-agent/NOW.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	r, err := maui.NewFixtureRunner("testdata/maui/live-agent")
	if err != nil {
		t.Fatal(err)
	}
	return r, time.Unix(s, 0)
}

// TestAgentRefusesDoubleBookingOnMaui is the reserve path end to end
// against the real Torque 6.1.3 + Maui 3.3.1 site (recorded; live with
// LOOKAHEAD_LIVE=1), requests over NATS: the snapshot carries Maui's
// reservations, so a grid job asking for processors another grid job (or
// an admin) already holds is refused stale by the forecast re-check before
// any setres; one that fits is reserved with the slack past its end and
// its own binding account; a retry runs no setres; the audit trail holds
// exactly the setres commands run.
func TestAgentRefusesDoubleBookingOnMaui(t *testing.T) {
	run, now := liveAgentSite(t)
	clock := func() time.Time { return now }
	tq := torque.NewClient(run, torque.ClientConfig{Site: "vm", Qstat: "/usr/local/bin/qstat", Pbsnodes: "/usr/local/bin/pbsnodes", Now: clock})
	res := agent.MauiReserver{Runner: run, Config: maui.ClientConfig{Location: time.UTC, Now: clock}}
	cfg := testConfig("vm")
	cfg.Refresh, cfg.Debounce, cfg.ForecastTTL = time.Hour, time.Hour, 3*time.Hour // one build, at start
	nc := startNATS(t)
	a, err := agent.New(cfg, agent.Deps{Conn: nc, Now: clock, Reserver: res,
		Snapshotter: agent.HoldingSnapshotter{Snapshotter: agent.TorqueSnapshotter{Client: tq}, Holds: res},
		Engine:      agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitService(t, nc, "vm")
	for deadline := time.Now().Add(20 * time.Second); a.Builds() < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no first forecast")
		}
	}
	liveAgentSteps(t, nc, run, now)
	var cmds []string
	for _, rec := range auditRecords(t, mustJS(t, nc)) {
		if rec.Action == wire.VerbReserve && rec.Command != nil {
			cmds = append(cmds, strings.Join(rec.Command, " "))
		}
	}
	want := []string{
		"setres -u alice* -a proj1,la.acct0*,la.acct0 -n la.maui-a1 -s " + hhmm(now.Unix()+600) + " -d 00:15:00 -r PROCS=4 ^(vm)$",
		"setres -u alice* -a proj1,la.acct1*,la.acct1 -n la.maui-a3 -s " + hhmm(now.Unix()+660) + " -d 00:15:00 -r PROCS=4 ^(vm)$",
	}
	if !slices.Equal(cmds, want) {
		t.Errorf("audited commands %q\nwant %q", cmds, want)
	}
}

func hhmm(t int64) string { return time.Unix(t, 0).UTC().Format("15:04:05_01/02/2006") }

func liveAgentSteps(t *testing.T, nc *nats.Conn, run maui.Runner, now time.Time) {
	t.Helper()
	ctx := context.Background()
	start := now.Unix() + 600
	ask := func(job string, procs int, at int64) wire.ReserveReply {
		return request[wire.ReserveReply](t, nc, "vm", wire.VerbReserve, wire.ReserveRequest{Type: wire.TypeReserve, Job: job, Site: "vm",
			Start: at, Duration: 600, Nodes: []wire.NodeProcs{{Node: "vm", Procs: procs}},
			Identity: wire.Identity{User: "alice", Account: "proj1"}, RequestedBy: "maui-test"})
	}
	defer func() {
		for _, j := range []string{"maui-a1", "maui-a2", "maui-a3", "maui-a4"} {
			request[wire.ReleaseReply](t, nc, "vm", wire.VerbRelease, wire.ReleaseRequest{Type: wire.TypeRelease, Job: j, Site: "vm", RequestedBy: "maui-test"})
		}
		_, _ = run.Run(ctx, "releaseres", "maui-adm.0")
	}()
	r1 := ask("maui-a1", 4, start)
	if r1.Code != wire.CodeOK || len(r1.Reservations) != 1 || r1.Reservations[0].End != start+600+300 ||
		r1.Reservations[0].Submit != "-A la.acct0 -W x=FLAGS:ADVRES:la.maui-a1.0 -N la.maui-a1.0" ||
		r1.Reservations[0].Identity != (wire.Identity{User: "alice", Account: "proj1"}) {
		t.Fatalf("first reservation: %+v", r1)
	}
	if again := ask("maui-a1", 4, start); again.Code != wire.CodeOK || len(again.Reservations) != 1 || again.Reservations[0].ID != "la.maui-a1.0" {
		t.Errorf("retry: %+v", again)
	}
	if r2 := ask("maui-a2", 6, start); r2.Code != wire.CodeStale {
		t.Errorf("6 of the 4 procs left: %+v, want stale", r2)
	}
	if r3 := ask("maui-a3", 4, start+60); r3.Code != wire.CodeOK || r3.Reservations[0].Submit != "-A la.acct1 -W x=FLAGS:ADVRES:la.maui-a3.0 -N la.maui-a3.0" {
		t.Errorf("the other 4 procs: %+v", r3)
	}
	adm := hhmm(start + 3600)
	if out, err := run.Run(ctx, "setres", "-u", "root", "-n", "maui-adm", "-s", adm, "-d", "00:30:00", "-r", "PROCS=2", "^(vm)$"); err != nil || out.ExitCode != 0 {
		t.Fatalf("admin setres: %+v %v", out, err)
	}
	if r4 := ask("maui-a4", 8, start+3600); r4.Code != wire.CodeStale {
		t.Errorf("the whole node over an admin's reservation: %+v, want stale", r4)
	}
}

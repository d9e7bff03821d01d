package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/broker"
	"lookahead/broker/daemon"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/cli"
	"lookahead/internal/natstest"
	"lookahead/wire"
)

// grid starts embedded NATS, one simulated site with the real agent, and
// the broker; it returns the NATS URL.
func grid(t *testing.T) string {
	t.Helper()
	srv := natstest.Server(t)
	conn := func() *nats.Conn { return natstest.Connect(t, srv) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	t.Cleanup(func() { cancel(); <-done; <-done })
	site, err := simsite.New(simsite.Config{Site: "alpha", Nodes: 4, PPN: 8, Policy: sim.EASY, Start: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Site: "alpha", Refresh: 200 * time.Millisecond, Debounce: 20 * time.Millisecond},
		agent.Deps{Conn: conn(), Snapshotter: site, Reserver: site,
			Engine: agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { a.Run(ctx); done <- struct{}{} }()
	bcfg := daemon.Config{CycleInterval: time.Hour, Debounce: 50 * time.Millisecond, Log: zerolog.Nop(),
		Policy: broker.Policy{Budgets: broker.Budgets{Accounts: map[string]float64{"proj1": 100}}}}
	bcfg.UsePlanner(daemon.NewPlanner(daemon.PlannerOptions{}))
	b, err := daemon.New(conn(), bcfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { b.Run(ctx); done <- struct{}{} }()
	<-b.Ready()
	deadline := time.Now().Add(5 * time.Second)
	for len(b.Sites().Sites) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return srv.ClientURL()
}

func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), cli.ExitCode(err)
}

func TestOnlineCommands(t *testing.T) {
	url := grid(t)
	out, code := run(t, "submit", "--procs", "16", "--walltime", "1h", "--max-price", "2", "--user", "alice",
		"--account", "proj1", "--nats-url", url, "-o", "json")
	var rep wire.SubmitReply
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Job == "" {
		t.Fatalf("submit: exit %d, %s", code, out)
	}
	// worst case 16 × 1 h × 2 = 32 of 100: a second such job fits, a third with 64 does not.
	out, code = run(t, "submit", "--procs", "32", "--walltime", "1h", "--max-price", "3", "--user", "alice",
		"--account", "proj1", "--nats-url", url)
	if code != cli.ExitRefused {
		t.Fatalf("over-budget submit: exit %d, %s", code, out)
	}
	deadline := time.Now().Add(5 * time.Second)
	var st wire.StatusReply
	for time.Now().Before(deadline) {
		out, code = run(t, "status", rep.Job, "--nats-url", url, "-o", "json")
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("status: exit %d, %s", code, out)
		}
		if st.Jobs[0].State == wire.JobReserved {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.Jobs[0].State != wire.JobReserved {
		t.Fatalf("job not reserved: %+v", st.Jobs[0])
	}
	for _, args := range [][]string{{"status"}, {"status", rep.Job}, {"sites"}, {"plan"}, {"audit"}, {"audit", "log", "--job", rep.Job}} {
		out, code = run(t, append(args, "--nats-url", url)...)
		if code != 0 || strings.TrimSpace(out) == "" {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
	}
	out, _ = run(t, "audit", "log", "--job", rep.Job, "--nats-url", url)
	for _, want := range []string{"commit-intent", "reserve", "commit", "charge"} {
		if !strings.Contains(out, want) {
			t.Errorf("audit log lacks %q:\n%s", want, out)
		}
	}
	out, code = run(t, "sites", "--nats-url", url)
	if code != 0 || !strings.Contains(out, "alpha") || !strings.Contains(out, "fresh") {
		t.Fatalf("sites: exit %d\n%s", code, out)
	}
	if out, code = run(t, "sites", "--nats-url", url, "--state", "stale,silent"); code != 0 || strings.Contains(out, "alpha") || !strings.Contains(out, "none of the 1 sites") {
		t.Fatalf("sites --state stale,silent: exit %d\n%s", code, out)
	}
	if out, code = run(t, "sites", "--nats-url", url, "--match", "ALP", "--sort", "free", "-o", "json"); code != 0 || !strings.Contains(out, `"site": "alpha"`) {
		t.Fatalf("sites --match ALP: exit %d\n%s", code, out)
	}
	if out, code = run(t, "sites", "--nats-url", url, "--sort", "size"); code != cli.ExitUsage {
		t.Fatalf("sites --sort size: exit %d\n%s", code, out)
	}
	if out, code = run(t, "cancel", rep.Job, "--nats-url", url); code != 0 || !strings.Contains(out, "cancelled") {
		t.Fatalf("cancel: exit %d %s", code, out)
	}
	if _, code = run(t, "cancel", "g999", "--nats-url", url); code != cli.ExitRefused {
		t.Fatalf("cancel unknown: exit %d", code)
	}
}

func TestOnlineCommandsExitCodes(t *testing.T) {
	if _, code := run(t, "status", "--nats-url", "nats://127.0.0.1:1", "--timeout", "300ms"); code != cli.ExitUnavailable {
		t.Fatalf("unreachable NATS: exit %d", code)
	}
	if _, code := run(t, "submit", "--procs", "0", "--walltime", "1h"); code != cli.ExitUsage {
		t.Fatalf("invalid job: exit %d", code)
	}
	if _, code := run(t, "submit"); code != cli.ExitUsage {
		t.Fatalf("no job: exit %d", code)
	}
}

// --deadline is a whole number of seconds from now, refused before the
// broker is contacted otherwise.
func TestSubmitDeadlineChecked(t *testing.T) {
	for _, d := range []string{"500ms", "-1h", "0s"} {
		out, code := run(t, "submit", "--procs", "1", "--walltime", "1h", "--deadline", d, "--nats-url", "nats://127.0.0.1:1")
		if code != cli.ExitUsage { // not 3: the broker was never asked
			t.Errorf("--deadline %s: exit %d, %s", d, code, out)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/natstest"
	"lookahead/torque"
)

func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPackagedConfigLoads(t *testing.T) {
	root := newRootCommand()
	root.SetArgs([]string{"forecast"})
	cmd, _, _ := root.Find([]string{"forecast"})
	cmd.ParseFlags([]string{"--site", "alpha"})
	c, err := loadConfig("../../packaging/config/agent.yaml", true, cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("packaged config with a site: %v", err)
	}
	if c.Site != "alpha" || c.Horizon != 24*time.Hour || c.Intervals.Debounce != 2*time.Second || c.Torque.PBSHome != "/var/spool/torque" {
		t.Fatalf("config %+v", c)
	}
	if p := c.pricing(); p.Base != 1 || p.Default.Multiplier != 2 {
		t.Fatalf("pricing %+v: queued_factor 1.0 should price queued time at 2x base", p)
	}
}

func TestConfigPrecedence(t *testing.T) {
	file := writeFile(t, "agent.yaml", "site: fromfile\nhorizon: 12h\nnats:\n  url: nats://file:4222\n"+
		"pricing:\n  base: 2\n  rules:\n    - queue: urgent\n      never: true\n")
	t.Setenv("LOOKAHEAD_NATS_URL", "nats://env:4222")
	t.Setenv("LOOKAHEAD_HORIZON", "6h")
	cmd, _, _ := newRootCommand().Find([]string{"forecast"})
	cmd.ParseFlags([]string{"--horizon", "3h"})
	c, err := loadConfig(file, true, cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	if c.Site != "fromfile" || c.NATS.URL != "nats://env:4222" || c.Horizon != 3*time.Hour {
		t.Fatalf("site %q url %q horizon %v: want file, env, flag", c.Site, c.NATS.URL, c.Horizon)
	}
	p := c.pricing()
	if p.Base != 2 || len(p.Rules) != 1 || !p.Rules[0].Never || p.Rules[0].Queue != "urgent" {
		t.Fatalf("pricing %+v", p)
	}
}

func TestConfigErrorsAreNamed(t *testing.T) {
	file := writeFile(t, "agent.yaml", "site: 'bad site'\nengine: magic\npolicy: random\nhorizon: -1h\n"+
		"intervals:\n  refresh: 60s\nforecast_ttl: 30s\npricing:\n  base: -1\n")
	_, err := execute(t, "forecast", "--once", "--config", file)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"site", "engine", "policy", "horizon", "forecast_ttl", "pricing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
	if _, err := execute(t, "forecast", "--once", "--config", "/nonexistent/agent.yaml", "--site", "a"); err == nil {
		t.Fatal("a named config file that does not exist was accepted")
	}
	if _, err := execute(t, "forecast", "--once", "--config", writeFile(t, "a.yaml", "site: a\npricing:\n  bogus: 1\n")); err == nil ||
		!strings.Contains(err.Error(), "bogus") {
		t.Fatalf("unknown pricing key: %v", err)
	}
}

// capturedSnapshot is the real Torque 4.2.10 capture with 0.vm running.
func capturedSnapshot(t *testing.T) string {
	fr, err := torque.NewFixtureRunner("../../agent/testdata/torque-4.2.10",
		torque.FixtureAt("17_pbsnodes_x_running"), torque.FixtureAlias("qstat -f -x -t", "qstat -f -x 0.vm"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := torque.NewClient(fr, torque.ClientConfig{Site: "vm"}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(snap)
	return writeFile(t, "snap.json", string(data))
}

func TestForecastOnceJSON(t *testing.T) {
	cfg := writeFile(t, "agent.yaml", "site: vm\nhorizon: 2h\n")
	out, err := execute(t, "forecast", "--once", "-o", "json", "--config", cfg, "--snapshot", capturedSnapshot(t))
	if err != nil {
		t.Fatal(err)
	}
	f, err := forecast.DecodeForecast(strings.NewReader(out))
	if err != nil {
		t.Fatalf("output is not a v1 forecast: %v\n%s", err, out)
	}
	if f.Site != "vm" || f.Horizon-f.Generated != 7200 || len(f.Nodes) != 1 || len(f.Slots) == 0 {
		t.Fatalf("forecast %+v", f)
	}
	out, err = execute(t, "forecast", "--once", "--config", cfg, "--snapshot", capturedSnapshot(t))
	if err != nil || !strings.Contains(out, "NODE") || !strings.Contains(out, "vm") {
		t.Fatalf("table: %v\n%s", err, out)
	}
	if _, err := execute(t, "forecast", "--config", cfg); err == nil {
		t.Fatal("forecast without --once accepted")
	}
}

func startServer(t *testing.T) string {
	return natstest.Server(t).ClientURL()
}

func TestStatusOfARunningAgent(t *testing.T) {
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	site, _ := simsite.New(simsite.Config{Site: "alpha", Nodes: 2, PPN: 4, Start: time.Now().Unix(),
		Workload: []sim.Job{{ID: "1", Procs: 8, Walltime: 3600, Runtime: 3600}, {ID: "2", Procs: 4, Walltime: 1800, Runtime: 1800}}})
	a, err := agent.New(agent.Config{Site: "alpha"}, agent.Deps{Conn: nc, Snapshotter: site, Reserver: site,
		Engine: agent.BuiltinEngine{Horizon: 2 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); a.Status().Revision == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cfg := writeFile(t, "agent.yaml", "site: alpha\n")
	out, err := execute(t, "status", "-o", "json", "--nats-url", url, "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var st agent.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Site != "alpha" || st.Revision != 1 || st.Nodes != 2 {
		t.Fatalf("status %+v (%v)", st, err)
	}
	// Job 2 waits for job 1's 8 processors: its predicted start is listed
	// (issue 38: an admin checks the forecast job by job).
	if st.QueueTotal != 1 || len(st.Queue) != 1 || st.Queue[0].Procs != 4 || st.Queue[0].Start < st.Generated+3500 {
		t.Fatalf("queue %+v (total %d), want job 2 predicted about an hour ahead", st.Queue, st.QueueTotal)
	}
	out, err = execute(t, "status", "--nats-url", url, "--config", cfg)
	if err != nil || !strings.Contains(out, "revision") || !strings.Contains(out, "queued local jobs: 1") ||
		!strings.Contains(out, "PREDICTED START") || !strings.Contains(out, st.Queue[0].Job) || !strings.Contains(out, "(in ") {
		t.Fatalf("status table: %v\n%s", err, out)
	}
	if _, err := execute(t, "status", "--site", "nobody", "--nats-url", url, "--timeout", "200ms", "--config", cfg); err == nil {
		t.Fatal("status of a site without an agent succeeded")
	}
}

func TestCheckReportsWhatIsWrong(t *testing.T) {
	url := startServer(t)
	state := t.TempDir()
	cfg := writeFile(t, "agent.yaml", "site: alpha\nstate_dir: "+state+"\ntorque:\n  pbs_home: "+t.TempDir()+"\n")
	out, err := execute(t, "check", "--config", cfg, "--nats-url", url, "--skip", "torque,maui", "-o", "json")
	var results []checkResult
	if jerr := json.Unmarshal([]byte(out), &results); jerr != nil {
		t.Fatalf("check output: %v\n%s", jerr, out)
	}
	byName := map[string]checkResult{}
	for _, r := range results {
		byName[r.Name] = r
	}
	if !byName["nats"].OK || !byName["state_dir"].OK || !byName["config"].OK {
		t.Fatalf("checks %+v", results)
	}
	if byName["server_logs"].OK || byName["server_logs"].Fix == "" || err == nil {
		t.Fatalf("missing server_logs passed or has no fix (err %v): %+v", err, byName["server_logs"])
	}
	out, _ = execute(t, "check", "--config", cfg, "--nats-url", "nats://127.0.0.1:1", "--skip", "torque,maui,logs")
	if !strings.Contains(out, "FAIL") || !strings.Contains(out, "fix:") {
		t.Fatalf("unreachable NATS not reported:\n%s", out)
	}
}

// run wires the real adapters: with no Torque or Maui installed it still
// starts, reports the failing snapshot in its status, answers list with an
// internal error naming the missing command, and stops cleanly on cancel,
// leaving the tailers' positions files in the state directory.
func TestRunStartsReportsAndStopsCleanly(t *testing.T) {
	url := startServer(t)
	home, state := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, "server_logs"), 0o755)
	os.MkdirAll(filepath.Join(home, "server_priv", "accounting"), 0o755)
	acct, err := os.ReadFile("../../agent/testdata/torque-4.2.10-accounting/20261122")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "server_priv", "accounting", "20261122"), acct, 0o644)
	cfg := writeFile(t, "agent.yaml", "site: alpha\nstate_dir: "+state+"\nmetrics:\n  listen: 127.0.0.1:0\n"+
		"torque:\n  pbs_home: "+home+"\n  qstat: /nonexistent/qstat\n  pbsnodes: /nonexistent/pbsnodes\n"+
		"maui:\n  showres: /nonexistent/showres\n  setres: /nonexistent/setres\n  releaseres: /nonexistent/releaseres\n")
	c, err := loadConfig(cfg, true, newRootCommand().Flags())
	if err != nil {
		t.Fatal(err)
	}
	c.NATS.URL = url
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runRun(ctx, c) }()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var st agent.Status
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		msg, err := nc.Request("lookahead.agent.alpha.status", nil, time.Second)
		if err == nil && json.Unmarshal(msg.Data, &st) == nil && st.LastError != "" {
			break
		}
	}
	if !strings.Contains(st.LastError, "/nonexistent/pbsnodes") {
		t.Fatalf("status last error %q, want the missing pbsnodes", st.LastError)
	}
	msg, err := nc.Request("lookahead.agent.alpha.list", []byte(`{"type":"list.v1"}`), 5*time.Second)
	if err != nil || !strings.Contains(string(msg.Data), `"code":"internal"`) || !strings.Contains(string(msg.Data), "showres") {
		t.Fatalf("list without Maui: %v %s", err, msgData(msg))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v on shutdown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
	pos, err := os.ReadFile(filepath.Join(state, "accounting.positions"))
	if err != nil || !strings.Contains(string(pos), "20261122") {
		t.Errorf("accounting positions file: %v %s", err, pos)
	}
}

func msgData(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}

func TestEngineMauiNeedsTheBinaryPath(t *testing.T) {
	for body, ok := range map[string]bool{
		"site: a\nengine: maui\n": false, // default maui.maui is "maui"
		"site: a\nengine: maui\nmaui:\n  maui: /usr/local/maui/sbin/maui\n": true,
	} {
		c, err := loadConfig(writeFile(t, "a.yaml", body), true, newRootCommand().Flags())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); (err == nil) != ok {
			t.Errorf("%q: validate %v, want ok=%v", body, err, ok)
		} else if ok {
			if _, isMaui := engine(c).(agent.MauiEngine); !isMaui {
				t.Errorf("engine maui built %T", engine(c))
			}
		}
	}
}

func TestTorqueServerIsHostOrHostPort(t *testing.T) {
	for server, ok := range map[string]bool{"vm": true, "pbs.example.org:15001": true, "vm:": false, "vm;rm -rf": false, "-q": false, "vm:99999x": false, "vm:99999": false, "vm:0": false, "vm:15001": true} {
		c, err := loadConfig(writeFile(t, "a.yaml", "site: a\ntorque:\n  server: \""+server+"\"\n"), true, newRootCommand().Flags())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "torque.server")) {
			t.Errorf("torque.server %q: %v, want ok=%v", server, err, ok)
		}
	}
}

// The pricing keys have variables too (LOOKAHEAD_PRICING_BASE), typed, over
// the file's value and keeping the file's other pricing keys; a value that
// is not a number is an error naming the variable.
func TestPricingFromEnvironment(t *testing.T) {
	file := writeFile(t, "a.yaml", "site: a\npricing:\n  base: 1.5\n  rules:\n    - {queue: urgent, never: true}\n")
	t.Setenv("LOOKAHEAD_PRICING_BASE", "2.5")
	t.Setenv("LOOKAHEAD_PRICING_QUEUED_FACTOR", "0.5")
	c, err := loadConfig(file, true, newRootCommand().Flags())
	if err != nil {
		t.Fatal(err)
	}
	if c.Pricing.Base != 2.5 || c.Pricing.QueuedFactor == nil || *c.Pricing.QueuedFactor != 0.5 ||
		len(c.Pricing.Rules) != 1 || c.Pricing.Rules[0].Queue != "urgent" {
		t.Fatalf("pricing %+v", c.Pricing)
	}
	t.Setenv("LOOKAHEAD_PRICING_BASE", "cheap")
	if _, err := loadConfig(file, true, newRootCommand().Flags()); err == nil || !strings.Contains(err.Error(), "LOOKAHEAD_PRICING_BASE") {
		t.Fatalf("a base that is not a number: %v", err)
	}
}

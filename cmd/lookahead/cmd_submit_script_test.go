package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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

func TestSubmitScriptRefusedLocally(t *testing.T) {
	dir := t.TempDir()
	empty, big := filepath.Join(dir, "empty.sh"), filepath.Join(dir, "big.sh")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(big, make([]byte, wire.MaxScriptBytes+1), 0o644)
	job := []string{"submit", "--procs", "1", "--walltime", "1h", "--max-price", "1", "--nats-url", "nats://127.0.0.1:1", "--timeout", "200ms"}
	for _, script := range []string{filepath.Join(dir, "missing.sh"), empty, big} {
		if _, code := run(t, append(job, "--script", script)...); code != cli.ExitUsage {
			t.Errorf("--script %s: exit %d, want %d", filepath.Base(script), code, cli.ExitUsage)
		}
	}
	if _, code := run(t, "submit", "-", "--script", "-"); code != cli.ExitUsage {
		t.Errorf("job and script both on stdin: exit %d", code)
	}
}

// dispatchGrid is grid() with a site that runs dispatched parts as alice.
func dispatchGrid(t *testing.T) string {
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
	users := func(name string) (agent.LocalUser, error) {
		if name != "alice" {
			return agent.LocalUser{}, errors.New("no such user")
		}
		return agent.LocalUser{Name: "alice", UID: 1001, Home: "/home/alice"}, nil
	}
	a, err := agent.New(agent.Config{Site: "alpha", Refresh: 200 * time.Millisecond, Debounce: 20 * time.Millisecond},
		agent.Deps{Conn: conn(), Snapshotter: site, Reserver: site, Executor: site, Users: users,
			Engine: agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { a.Run(ctx); done <- struct{}{} }()
	bcfg := daemon.Config{CycleInterval: 200 * time.Millisecond, Debounce: 50 * time.Millisecond, Log: zerolog.Nop(),
		Policy: broker.Policy{Budgets: broker.Budgets{Accounts: map[string]float64{"proj1": 100}}}}
	bcfg.UsePlanner(daemon.NewPlanner(daemon.PlannerOptions{}))
	b, err := daemon.New(conn(), bcfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { b.Run(ctx); done <- struct{}{} }()
	<-b.Ready()
	for deadline := time.Now().Add(5 * time.Second); len(b.Sites().Sites) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	return srv.ClientURL()
}

func TestSubmitScriptDispatchesAndStatusShowsParts(t *testing.T) {
	url := dispatchGrid(t)
	script := filepath.Join(t.TempDir(), "run.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nhostname\n"), 0o644)
	out, code := run(t, "submit", "--procs", "16", "--walltime", "1h", "--max-price", "2", "--user", "alice",
		"--account", "proj1", "--script", script, "--nats-url", url, "-o", "json")
	var rep wire.SubmitReply
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Job == "" {
		t.Fatalf("submit: exit %d, %s", code, out)
	}
	var st wire.StatusReply
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out, _ = run(t, "status", rep.Job, "--nats-url", url, "-o", "json")
		if json.Unmarshal([]byte(out), &st) == nil && len(st.Jobs) == 1 && st.Jobs[0].State == wire.JobDispatched {
			break
		}
	}
	if len(st.Jobs) != 1 || st.Jobs[0].State != wire.JobDispatched || st.Jobs[0].ScriptBytes != 19 {
		t.Fatalf("not dispatched: %+v", st.Jobs)
	}
	out, code = run(t, "status", rep.Job, "--nats-url", url)
	for _, want := range []string{"dispatched", "script", "19 bytes", "part 0", "alpha: dispatched, 1.alpha as alice", "/home/alice/la." + rep.Job + ".0.out"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("status lacks %q (exit %d):\n%s", want, code, out)
		}
	}
	if out, code = run(t, "cancel", rep.Job, "--nats-url", url); code != 0 || !strings.Contains(out, "being deleted") {
		t.Fatalf("cancel: exit %d %s", code, out)
	}
}

package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookahead/agent"
)

func TestReadiness(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	refresh := time.Minute
	cases := []struct {
		name string
		st   agent.Status
		want bool
	}{
		{"no forecast yet", agent.Status{}, false},
		{"first forecast failed", agent.Status{LastError: "pbsnodes: exit 1", Failures: 1}, false},
		{"fresh forecast", agent.Status{LastPublish: now.Unix() - 30}, true},
		{"one failure after a forecast", agent.Status{LastPublish: now.Unix() - 30, LastError: "x", Failures: 1}, true},
		{"the last 3 cycles failed", agent.Status{LastPublish: now.Unix() - 30, LastError: "x", Failures: 3}, false},
		{"last forecast older than 3 refreshes", agent.Status{LastPublish: now.Unix() - 181}, false},
		{"last forecast 3 refreshes old", agent.Status{LastPublish: now.Unix() - 180}, true},
	}
	for _, c := range cases {
		ok, why := readiness(c.st, now, refresh)
		if ok != c.want || (!ok && why == "") {
			t.Errorf("%s: ready %v (%q), want %v", c.name, ok, why, c.want)
		}
	}
}

// TestReadyzTurnsNotReadyWhenForecastsFail runs the daemon on clients
// that print the live Torque 6.1.3 capture of non-adjacent cores: /readyz
// answers 200 once a forecast is out, and 503 naming the error once
// pbsnodes fails on every cycle.
func TestReadyzTurnsNotReadyWhenForecastsFail(t *testing.T) {
	url := startServer(t)
	home, state, bin := t.TempDir(), t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, "server_logs"), 0o755)
	os.MkdirAll(filepath.Join(home, "server_priv", "accounting"), 0o755)
	live, _ := filepath.Abs("../../torque/testdata/torque-6.1.3/live-noncontiguous")
	broken := filepath.Join(bin, "broken")
	script := func(name, body string) string {
		p := filepath.Join(bin, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pbsnodes := script("pbsnodes", "[ -e "+broken+" ] && { echo 'pbsnodes: cannot connect to server' >&2; exit 1; }\ncat "+live+"/pbsnodes-gap.xml")
	qstat := script("qstat", "cat "+live+"/qstat-f-gap.xml")
	// Maui's reservations in force are part of a snapshot: none, as the
	// live Maui 3.3.1 printed it (maui/testdata/live-reserve).
	noRes, _ := filepath.Abs("../../maui/testdata/live-reserve/01_showres.out")
	showres := script("showres", "cat "+noRes)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := writeFile(t, "agent.yaml", "site: alpha\nstate_dir: "+state+"\nmetrics:\n  listen: "+addr+"\n"+
		"intervals:\n  refresh: 1s\n  heartbeat: 1s\n"+
		"torque:\n  pbs_home: "+home+"\n  qstat: "+qstat+"\n  pbsnodes: "+pbsnodes+"\n"+
		"maui:\n  showres: "+showres+"\n  setres: /nonexistent/setres\n  releaseres: /nonexistent/releaseres\n")
	c, err := loadConfig(cfg, true, newRootCommand().Flags())
	if err != nil {
		t.Fatal(err)
	}
	c.NATS.URL = url
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runRun(ctx, c) }()
	defer func() { cancel(); <-done }()
	waitReadyz(t, addr, http.StatusOK, "")
	if err := os.WriteFile(broken, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitReadyz(t, addr, http.StatusServiceUnavailable, "cannot connect to server")
}

func waitReadyz(t *testing.T, addr string, code int, text string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			last = err.Error()
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = resp.Status + " " + string(body)
		if resp.StatusCode == code && strings.Contains(string(body), text) {
			return
		}
	}
	t.Fatalf("/readyz never answered %d with %q; last: %s", code, text, last)
}

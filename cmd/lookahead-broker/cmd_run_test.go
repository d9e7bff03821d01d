package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"lookahead/internal/logtest"
	"lookahead/internal/natstest"
)

// TestRunServesAndStops runs the daemon against a real embedded NATS with
// its metrics listener, scrapes it once ready, and stops it by context. It
// says "broker ready" once.
func TestRunServesAndStops(t *testing.T) {
	logs := &logtest.Buffer{}
	logOutput = logs
	defer func() { logOutput = os.Stderr }()
	srv := natstest.Server(t)
	cmd := subcommand("run")
	addr := freePort(t) // not a fixed port: a live broker may hold 19465 on a shared machine
	cmd.Flags().Parse([]string{"--config", "../../packaging/config/broker.yaml", "--nats-url", srv.ClientURL(),
		"--metrics-listen", addr, "--log-level", "info"})
	cfg, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runRun(ctx, cfg) }()
	body := ""
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := http.Get("http://" + addr + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				m, err := http.Get("http://" + addr + "/metrics")
				if err == nil {
					b, _ := io.ReadAll(m.Body)
					m.Body.Close()
					body = string(b)
				}
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "lookahead_broker") {
			t.Log(l)
		}
	}
	for _, want := range []string{"lookahead_broker_info", "lookahead_broker_sites"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
	if n := strings.Count(logs.String(), `"message":"broker ready"`); n != 1 {
		t.Errorf("%d \"broker ready\" lines, want 1:\n%s", n, logs)
	}
}

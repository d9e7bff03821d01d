package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

func TestServerServesMetricsAndHealth(t *testing.T) {
	reg := NewRegistry()
	a := NewAgent(reg)
	a.ForecastBuilt(1500 * time.Millisecond)
	a.ReservationRequest("reserve", "ok")
	s := &Server{Addr: "127.0.0.1:0", Gatherer: reg}
	addr, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	base := "http://" + addr.String()

	code, body := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		"lookahead_agent_forecasts_built_total 1",
		`lookahead_agent_forecast_build_seconds_bucket{le="2.5"} 1`,
		`lookahead_agent_forecast_build_seconds_bucket{le="1"} 0`,
		`lookahead_agent_reservation_requests_total{code="ok",verb="reserve"} 1`,
		"go_goroutines",
		"process_resident_memory_bytes",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, body := get(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable || body != "not ready: starting\n" {
		t.Errorf("/readyz before ready = %d %q", code, body)
	}
	s.SetReady()
	if code, _ := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after SetReady = %d", code)
	}
	s.SetNotReady("nats disconnected")
	if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "nats disconnected") {
		t.Errorf("/readyz after SetNotReady = %d %q", code, body)
	}
	if code, _ := get(t, base+"/nope"); code != http.StatusNotFound {
		t.Errorf("/nope = %d, want 404", code)
	}
	resp, err := http.Post(base+"/metrics", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics = %d, want 405", resp.StatusCode)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
}

func TestServerOffWithoutAddr(t *testing.T) {
	s := &Server{}
	if addr, err := s.Listen(); addr != nil || err != nil {
		t.Fatalf("Listen with no Addr = %v, %v", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestServerPortTaken(t *testing.T) {
	first := &Server{Addr: "127.0.0.1:0"}
	addr, err := first.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer first.ln.Close()
	second := &Server{Addr: addr.String()}
	err = second.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "metrics listener on "+addr.String()) {
		t.Fatalf("second listener on a taken port: %v", err)
	}
}

package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"lookahead/agent"
	"lookahead/agent/simsite"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/metrics"
	"lookahead/wire"
)

// The agent records into the Prometheus metric set of internal/metrics.
func TestMetricsRecorded(t *testing.T) {
	nc := startNATS(t)
	reg := prometheus.NewRegistry()
	met := metrics.NewAgent(reg)
	c := newClock(t0)
	site, _ := simsite.New(simsite.Config{Site: "gamma", Nodes: 4, PPN: 4, Policy: sim.EASY, Workload: smallWorkload(), Start: t0, Clock: c.Now})
	a, err := agent.New(testConfig("gamma"), agent.Deps{Conn: nc, Snapshotter: site, Reserver: site, Metrics: met, Now: c.Now,
		Engine: agent.BuiltinEngine{Horizon: time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitService(t, nc, "gamma")
	waitForecast(t, waitBucket(t, mustJS(t, nc)), "gamma", 1)
	request[wire.ReserveReply](t, nc, "gamma", wire.VerbReserve, reserveReq("g9", t0+60, 600, wire.NodeProcs{Node: "bogus;x", Procs: 1}))
	err = testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP lookahead_agent_reservation_requests_total Reservation service requests, by verb (reserve, release, list) and result code.
# TYPE lookahead_agent_reservation_requests_total counter
lookahead_agent_reservation_requests_total{code="invalid",verb="reserve"} 1
`), "lookahead_agent_reservation_requests_total")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := testutil.GatherAndCount(reg, "lookahead_agent_forecasts_built_total", "lookahead_agent_forecast_encoded_bytes"); got != 2 {
		t.Fatalf("%d of the forecast metrics present, want 2", got)
	}
}

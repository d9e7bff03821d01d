package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"lookahead/internal/metrics"
)

// A daemon builds its metric set on a registry, serves it, and records
// what happens. Here: one forecast, one publication, one reserve request.
func ExampleServer() {
	reg := metrics.NewRegistry()
	agent := metrics.NewAgent(reg)
	agent.SetVersion("0.1.0")
	srv := &metrics.Server{Addr: "127.0.0.1:0", Gatherer: reg}
	addr, err := srv.Listen()
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() { done <- srv.Run(ctx) }()

	agent.Event(metrics.SourceServerLog)
	agent.ForecastBuilt(420 * time.Millisecond)
	agent.ForecastPublished(7, 1200, 48000, time.Unix(1763780000, 0))
	agent.ReservationRequest("reserve", "ok")
	srv.SetReady()

	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "lookahead_agent_") && !strings.Contains(line, "_bucket") {
			fmt.Println(line)
		}
	}
	cancel()
	<-done
	// Output:
	// lookahead_agent_events_total{source="server_log"} 1
	// lookahead_agent_forecast_build_seconds_sum 0.42
	// lookahead_agent_forecast_build_seconds_count 1
	// lookahead_agent_forecast_encoded_bytes 48000
	// lookahead_agent_forecast_revision 7
	// lookahead_agent_forecasts_built_total 1
	// lookahead_agent_forecasts_published_total{kind="forecast"} 1
	// lookahead_agent_foreign_jobs_total 0
	// lookahead_agent_info{version="0.1.0"} 1
	// lookahead_agent_last_publish_timestamp_seconds 1.76378e+09
	// lookahead_agent_publish_failures_total 0
	// lookahead_agent_published_slots 1200
	// lookahead_agent_reservation_repairs_failed_total 0
	// lookahead_agent_reservation_requests_total{code="ok",verb="reserve"} 1
	// lookahead_agent_scheduler_restarts_seen_total 0
	// lookahead_agent_slots_published_total 1200
	// lookahead_agent_start_forecast_error_seconds_sum 0
	// lookahead_agent_start_forecast_error_seconds_count 0
}

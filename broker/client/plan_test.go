package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"lookahead/forecast"
	"lookahead/internal/natstest"
	"lookahead/wire"
)

// pagedBroker answers plan requests in pages of two allocations of a plan
// of five; cycle says which cycle's plan each request gets.
func pagedBroker(t *testing.T, cycle func(request int) uint64) *Client {
	t.Helper()
	_, nc := natstest.Start(t)
	var mu sync.Mutex
	requests := 0
	_, err := nc.Subscribe(wire.BrokerSubject(wire.VerbPlan), func(m *nats.Msg) {
		var req wire.PlanRequest
		if err := wire.DecodeStrict(m.Data, &req); err != nil {
			t.Errorf("plan request %q: %v", m.Data, err)
		}
		mu.Lock()
		c := cycle(requests)
		requests++
		mu.Unlock()
		p := wire.Plan{Type: wire.TypePlan, Cycle: c, Total: 5}
		for i := req.After; i < min(req.After+2, 5); i++ {
			p.Allocations = append(p.Allocations, forecast.Allocation{Job: fmt.Sprintf("c%d-g%d", c, i+1)})
		}
		if req.After+2 < 5 {
			p.Next = req.After + 2
		}
		data, _ := json.Marshal(p)
		m.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return New(nc, "")
}

func jobsOf(p wire.Plan) string {
	var out []string
	for _, a := range p.Allocations {
		out = append(out, a.Job)
	}
	return strings.Join(out, ",")
}

// Plan reads every page; when the broker plans again between pages it
// reads the new plan from its start, and gives up on a broker that plans
// again on every page.
func TestPlanReadsPagesOfOneCycle(t *testing.T) {
	ctx := context.Background()
	p, err := pagedBroker(t, func(int) uint64 { return 1 }).Plan(ctx)
	if err != nil || p.Cycle != 1 || p.Next != 0 || jobsOf(p) != "c1-g1,c1-g2,c1-g3,c1-g4,c1-g5" {
		t.Fatalf("one cycle: %v cycle %d next %d %s", err, p.Cycle, p.Next, jobsOf(p))
	}
	// cycle 2 from the second request on: its first page is read again
	p, err = pagedBroker(t, func(r int) uint64 { return min(uint64(r)+1, 2) }).Plan(ctx)
	if err != nil || p.Cycle != 2 || jobsOf(p) != "c2-g1,c2-g2,c2-g3,c2-g4,c2-g5" {
		t.Fatalf("a cycle between pages: %v cycle %d %s", err, p.Cycle, jobsOf(p))
	}
	_, err = pagedBroker(t, func(r int) uint64 { return uint64(r) + 1 }).Plan(ctx)
	if err == nil || !strings.Contains(err.Error(), "planned again while its plan was read") {
		t.Fatalf("a cycle on every page: %v", err)
	}
}

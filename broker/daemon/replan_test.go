package daemon

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"lookahead/broker/coalloc"
)

// replanMetrics records what the broker counts of its re-planning.
type replanMetrics struct {
	noMetrics
	mu    sync.Mutex
	calls []map[string]int
}

func (m *replanMetrics) Replanned(reused int, byReason map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := maps.Clone(byReason)
	c["reused"] = reused
	m.calls = append(m.calls, c)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCycleReportsReplans: every cycle counts and logs how many jobs were
// planned again and why. The first cycle plans all; a second with nothing
// changed keeps every answer; once time passes the start of the placed
// jobs, only those are planned again (the job that does not fit keeps its
// answer).
func TestCycleReportsReplans(t *testing.T) {
	e := newEnv(t)
	e.publish("a", 1, 2, 8, 1)
	m := &replanMetrics{}
	var logs syncBuffer
	pl := NewPlanner(PlannerOptions{})
	r := e.startBroker(func(c *Config) {
		c.Planner, c.PlanStats, c.Metrics = pl.Plan, pl.TakeStats, m
		c.CommitLead = time.Second // plan, reserve nothing
		c.Log = zerolog.New(&logs).Level(zerolog.InfoLevel)
	})
	e.waitSites(r.b, 1)
	for i, price := range []float64{2, 2, 0.5} { // the last one is priced out: it never fits
		if rep := submit(t, r.b, "r"+string(rune('0'+i)), job(8, 3600, price)); rep.Code != "ok" {
			t.Fatalf("submit: %+v", rep)
		}
	}
	ctx := context.Background()
	for range 2 {
		if err := r.b.Cycle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Add(10 * time.Second)
	if err := r.b.Cycle(ctx); err != nil {
		t.Fatal(err)
	}
	want := []map[string]int{
		{"full": 3, "new": 0, "time": 0, "changed": 0, "reused": 0},
		{"full": 0, "new": 0, "time": 0, "changed": 0, "reused": 3},
		{"full": 0, "new": 0, "time": 2, "changed": 0, "reused": 1},
	}
	m.mu.Lock()
	got := m.calls
	m.mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("counted %d cycles, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if !maps.Equal(got[i], want[i]) {
			t.Errorf("cycle %d: counted %v, want %v", i+1, got[i], want[i])
		}
	}
	if n := strings.Count(logs.String(), `"replanned":`); n != 3 {
		t.Errorf("%d cycle lines with re-planning figures at info level, want 3:\n%s", n, logs.String())
	}
}

// TestSnapshotKeepsTheQueueOrder: the cycle's input lists the waiting
// jobs in the planner's queue order (by default fcfs: submitted, then
// id; price: max_price descending first, then submitted) and the holds
// State.Holds lists.
func TestSnapshotKeepsTheQueueOrder(t *testing.T) {
	for order, want := range map[string][]string{
		"":                 {"p-0", "p-1", "p-2", "p-3", "p-4", "p-5"},
		coalloc.OrderPrice: {"p-1", "p-3", "p-5", "p-2", "p-0", "p-4"},
	} {
		e := newEnv(t)
		e.publish("a", 1, 2, 8, 1)
		r := e.startBroker(func(c *Config) {
			if order != "" {
				c.Queue = NewPlanner(PlannerOptions{Order: order})
			}
		})
		e.waitSites(r.b, 1)
		name := map[string]string{}
		for i, price := range []float64{1, 3, 2, 3, 1, 2.5} {
			rep := submit(t, r.b, fmt.Sprintf("p-%d", i), job(8, 3600, price))
			if rep.Code != "ok" {
				t.Fatalf("submit: %+v", rep)
			}
			name[rep.Job] = fmt.Sprintf("p-%d", i)
			e.clock.Add(time.Second)
		}
		in, _, _ := r.b.snapshot(r.b.now())
		r.b.mu.Lock()
		holds := r.b.state.Holds()
		r.b.mu.Unlock()
		var got []string
		for _, j := range in.Jobs {
			got = append(got, name[j.ID])
		}
		if !slices.Equal(got, want) || len(in.Holds) != len(holds) {
			t.Fatalf("order %q: snapshot order %v, want %v; holds %d, want %d", order, got, want, len(in.Holds), len(holds))
		}
	}
}

package daemon

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lookahead/broker"
	"lookahead/broker/brokertest"
	"lookahead/broker/coalloc"
)

// TestCommitsFollowThePlanningOrder: a cycle reserves its due jobs in the
// order the planner planned them (planning.order) and the plan names that
// order: with fcfs, and with the planner's default order (none set), the
// job submitted first is reserved first though
// the later one pays more; with price the dearer one is; with aging at
// 1 s per credit the later one's 2 credits more outweigh its second.
func TestCommitsFollowThePlanningOrder(t *testing.T) {
	for _, tc := range []struct {
		order string
		aging float64
		want  []string
	}{
		{coalloc.OrderFCFS, 0, []string{"early-cheap", "late-dear"}},
		{"", 0, []string{"early-cheap", "late-dear"}},
		{coalloc.OrderPrice, 0, []string{"late-dear", "early-cheap"}},
		{coalloc.OrderAging, 1, []string{"late-dear", "early-cheap"}},
	} {
		t.Run("order="+tc.order, func(t *testing.T) {
			e := newEnv(t)
			e.publish("a", 1, 2, 8, 1)
			e.startSite("a")
			var mu sync.Mutex
			var intents []string
			r := e.startBroker(func(c *Config) {
				if tc.order == "" {
					c.UsePlanner(NewPlanner(PlannerOptions{}))
				} else {
					c.UsePlanner(NewPlanner(PlannerOptions{Order: tc.order, Aging: tc.aging}))
				}
				c.appendHook = func(_ context.Context, ev broker.Event) {
					if ev.Kind == broker.EvIntent {
						mu.Lock()
						intents = append(intents, ev.Job)
						mu.Unlock()
					}
				}
			})
			e.waitSites(r.b, 1)
			name := map[string]string{}
			for _, j := range []struct {
				name  string
				price float64
			}{{"early-cheap", 1}, {"late-dear", 3}} {
				rep := submit(t, r.b, j.name, job(8, 3600, j.price))
				if rep.Code != "ok" {
					t.Fatalf("submit %s: %+v", j.name, rep)
				}
				name[rep.Job] = j.name
				e.clock.Add(time.Second)
			}
			if err := r.b.Cycle(context.Background()); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			var got []string
			for _, id := range intents {
				got = append(got, name[id])
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("commit intents in the order %v, want %v (the plan's order)", got, tc.want)
			}
			want := cmp.Or(tc.order, coalloc.OrderFCFS)
			if got := r.b.Plan().Order; got != want {
				t.Errorf("the plan names the order %q, want %q", got, want)
			}
		})
	}
}

// TestAPlannerNeedsItsQueue: a broker cannot commit in and name one order
// while its planner plans in another. A planner bound without the queue
// order it plans in (a *Planner's Plan alone, planning in price) is
// refused, naming UsePlanner; bound with UsePlanner the broker commits in
// and names the planner's own order; a planner of the jobs in the order
// it is given goes with FCFS.
func TestAPlannerNeedsItsQueue(t *testing.T) {
	price := NewPlanner(PlannerOptions{Order: coalloc.OrderPrice})
	bare := Config{Planner: price.Plan}
	bare.setDefaults()
	if err := bare.Validate(); err == nil || !strings.Contains(err.Error(), "Config.UsePlanner") {
		t.Errorf("a planner without its queue order: %v, want an error naming Config.UsePlanner", err)
	}
	var bound Config
	bound.UsePlanner(price)
	bound.setDefaults()
	if err := bound.Validate(); err != nil || bound.Queue.Order() != coalloc.OrderPrice {
		t.Errorf("bound with UsePlanner: %v, order %q, want none and price", err, bound.Queue.Order())
	}
	ref := Config{Planner: brokertest.Planner, Queue: FCFS}
	ref.setDefaults()
	if err := ref.Validate(); err != nil || ref.Queue.Order() != coalloc.OrderFCFS {
		t.Errorf("a reference planner with FCFS: %v, order %q", err, ref.Queue.Order())
	}
}

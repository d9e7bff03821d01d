package daemon

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"lookahead/broker"
	"lookahead/broker/coalloc"
)

// TestCommitsFollowThePlanningOrder: a cycle reserves its due jobs in the
// order the planner planned them (planning.order) and the plan names that
// order: with fcfs, and with an in-process broker's defaults (no order,
// no Queue: the demo's), the job submitted first is reserved first though
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
					c.Planner = CoallocPlanner(PlannerOptions{})
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

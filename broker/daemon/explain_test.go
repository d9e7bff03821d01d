package daemon

import (
	"context"
	"strings"
	"testing"

	"lookahead/wire"
)

// A waiting job's status says where it stands in the queue and, when it
// did not fit, what was short and what would help (the planner's Explain
// on the last cycle's forecasts), not only the no-fit code.
func TestStatusExplainsAJobThatDoesNotFit(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	e.publish("alpha", 1, 4, 8, 2) // 32 procs, all at price 2
	planner := NewPlanner(PlannerOptions{})
	r := e.startBroker(func(c *Config) { c.Planner, c.Explain = planner.Plan, planner.Explain })
	e.waitSites(r.b, 1)
	cheap := submit(t, r.b, "k1", job(16, 3600, 1)) // nothing is that cheap
	dear := submit(t, r.b, "k2", job(16, 3600, 3))  // pays more: planned first
	if cheap.Code != wire.CodeOK || dear.Code != wire.CodeOK {
		t.Fatalf("submit: %+v %+v", cheap, dear)
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := status(t, r.b, cheap.Job)
	if st.State != wire.JobWaiting || st.Plan == nil || st.Plan.Placed() {
		t.Fatalf("status %+v, want a waiting job without an allocation", st)
	}
	for _, want := range []string{"at max_price 1 at most 0 of its 16 processors", "max_price 2 would fit"} {
		if !strings.Contains(st.Plan.Why, want) {
			t.Errorf("why %q\nwant it to contain %q", st.Plan.Why, want)
		}
	}
	if q := st.Queue; q == nil || q.Position != 2 || q.Of != 2 || q.Order != "price" {
		t.Errorf("queue %+v, want 2 of 2 in price order (the job paying 3 is planned first)", q)
	}
}

package daemon

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/wire"
)

// oneFitsOneDoesNot runs a broker on one site of 32 processors, all at
// price 2, with a 16-processor job nothing is cheap enough for (paying 1)
// and one paying 3 (planned first in price order), after one cycle.
func oneFitsOneDoesNot(t *testing.T) (r *brokerRun, cheap, dear wire.SubmitReply) {
	t.Helper()
	e := newEnv(t)
	e.startSite("alpha")
	e.publish("alpha", 1, 4, 8, 2)
	planner := NewPlanner(PlannerOptions{Order: coalloc.OrderPrice})
	r = e.startBroker(func(c *Config) { c.UsePlanner(planner) })
	e.waitSites(r.b, 1)
	cheap, dear = submit(t, r.b, "k1", job(16, 3600, 1)), submit(t, r.b, "k2", job(16, 3600, 3))
	if cheap.Code != wire.CodeOK || dear.Code != wire.CodeOK {
		t.Fatalf("submit: %+v %+v", cheap, dear)
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r, cheap, dear
}

// A waiting job's status says where it stands in the queue and, when it
// did not fit, what was short and what would help (the planner's Explain
// on the last cycle's forecasts), not only the no-fit code.
func TestStatusExplainsAJobThatDoesNotFit(t *testing.T) {
	r, cheap, _ := oneFitsOneDoesNot(t)
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

// A waiting job planned later than now (its processors free only when a
// local job ends) says in status what is short now, when it is reserved
// (the broker's commit lead before its start), then how the plan was
// chosen.
func TestStatusSaysWhatIsShortNowForAJobPlannedLater(t *testing.T) {
	e := newEnv(t)
	for _, f := range laterSites(e.clock.Now().Unix(), 0) {
		e.putForecast(f.Site, f)
	}
	planner := NewPlanner(PlannerOptions{})
	r := e.startBroker(func(c *Config) {
		c.Planner, c.Explain, c.ExplainLater = planner.Plan, planner.Explain, planner.ExplainLater
		c.CommitLead = 25 * time.Minute
	})
	e.waitSites(r.b, 2)
	rep := submit(t, r.b, "k1", job(18, 3600, 2))
	if rep.Code != wire.CodeOK {
		t.Fatalf("submit: %+v", rep)
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := status(t, r.b, rep.Job)
	if st.State != wire.JobWaiting || st.Plan == nil || !st.Plan.Placed() || st.Plan.Start != e.clock.Now().Unix()+2*3600 {
		t.Fatalf("status %+v, want a waiting job planned 2h ahead", st)
	}
	want := "cannot start now: at max_price 2 only 17 of its 18 processors are free together now for its walltime of 1h (beta 8, delta 9)"
	if !strings.HasPrefix(st.Plan.Why, want) || !strings.Contains(st.Plan.Why, "; planned at ") {
		t.Errorf("why %q\nwant it to start with %q, then say when it is planned", st.Plan.Why, want)
	}
	reserved := fmt.Sprintf("; it is reserved at %s, the commit lead (25m) before its start; until then the plan may move",
		time.Unix(st.Plan.Start-25*60, 0).UTC().Format("15:04 UTC"))
	if !strings.Contains(st.Plan.Why, reserved) {
		t.Errorf("why %q\nwant it to say when it is reserved with the broker's commit lead: %q", st.Plan.Why, reserved)
	}
	if plan := r.b.Plan(); len(plan.Allocations) != 1 || !strings.HasSuffix(st.Plan.Why, "; "+plan.Allocations[0].Why) {
		t.Errorf("why %q\nwant it to end with the planner's why %+v", st.Plan.Why, plan.Allocations)
	}
}

// The web view's rows say why a waiting job waits as status does, from
// the same explanations: each computed once per cycle (status reuses
// them), at most ViewExplains per Jobs call, the rest on later calls.
func TestJobsExplainAsStatusOncePerCycle(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	e.publish("alpha", 1, 4, 8, 2) // 32 procs, all at price 2
	var calls atomic.Int64
	r := e.startBroker(func(c *Config) {
		c.UsePlanner(NewPlanner(PlannerOptions{}))
		explain := c.Explain
		c.Explain = func(fcs []forecast.Forecast, j forecast.JobRequest, notBefore int64) string {
			calls.Add(1)
			return explain(fcs, j, notBefore)
		}
	})
	e.waitSites(r.b, 1)
	n := ViewExplains + 3
	for i := range n {
		if rep := submit(t, r.b, fmt.Sprintf("k%d", i), job(16, 3600, 1)); rep.Code != wire.CodeOK { // nothing is that cheap
			t.Fatalf("submit: %+v", rep)
		}
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	const short = "at max_price 1 at most 0 of its 16 processors"
	explainedRows := func() int {
		jobs, _, _, _ := r.b.Jobs(nil, 0)
		k := 0
		for _, st := range jobs {
			if st.Plan != nil && strings.Contains(st.Plan.Why, short) {
				k++
			}
		}
		return k
	}
	if k, c := explainedRows(), calls.Load(); k != ViewExplains || c != ViewExplains {
		t.Errorf("first view: %d rows explained, %d explanations computed; want %d of %d", k, c, ViewExplains, n)
	}
	if k, c := explainedRows(), calls.Load(); k != n || c != int64(n) {
		t.Errorf("second view: %d rows explained, %d computed; want all %d, each once", k, c, n)
	}
	jobs, _, _, _ := r.b.Jobs(nil, 0)
	for _, st := range jobs {
		if want := status(t, r.b, st.Job.ID).Plan.Why; st.Plan == nil || st.Plan.Why != want {
			t.Errorf("row %s: why %+v, want status's %q", st.Job.ID, st.Plan, want)
		}
	}
	if c := calls.Load(); c != int64(n) {
		t.Errorf("a third view and status of every job computed %d explanations in all, want the %d kept", c, n)
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if k, c := explainedRows(), calls.Load(); k != ViewExplains || c != int64(n+ViewExplains) {
		t.Errorf("after a new cycle: %d rows explained, %d computed in all; want %d anew (%d in all)", k, c, ViewExplains, n+ViewExplains)
	}
}

// The queue's status (`lookahead status` without a job) says of a job the
// last cycle could not place what was short, as `status JOB` does (the
// same explanation, kept for the cycle), not only the no-fit code; a
// placed job keeps its plan's own why.
func TestStatusListExplainsAJobThatDoesNotFit(t *testing.T) {
	r, cheap, dear := oneFitsOneDoesNot(t)
	list := r.b.Status(wire.StatusRequest{})
	rows := map[string]wire.JobStatus{}
	for _, j := range list.Jobs {
		rows[j.Job.ID] = j
	}
	c, d := rows[cheap.Job], rows[dear.Job]
	if c.Plan == nil || c.Plan.Placed() || !strings.Contains(c.Plan.Why, "at max_price 1 at most 0 of its 16 processors") {
		t.Errorf("the unplaced job's row: %+v\nwant the planner's why", c.Plan)
	}
	if one := status(t, r.b, cheap.Job); c.Plan != nil && one.Plan.Why != c.Plan.Why {
		t.Errorf("the list says %q, status JOB %q", c.Plan.Why, one.Plan.Why)
	}
	if d.Plan == nil || !d.Plan.Placed() || strings.Contains(d.Plan.Why, "at max_price") {
		t.Errorf("the placed job's row: %+v, want its plan's own why", d.Plan)
	}
}

package demo

import (
	"strings"
	"testing"

	"lookahead/broker/daemon"
	"lookahead/forecast"
)

// TestDemoBrokerExplainsLikeTheRealOne: the demo binds its planner as
// lookahead-broker does (daemon.Config.UsePlanner), so its broker names
// the planner's own queue order and status and the web view say why a
// job waits: the config carries the planner's why-texts, and they answer.
func TestDemoBrokerExplainsLikeTheRealOne(t *testing.T) {
	o := Options{}
	o.defaults()
	r := &run{o: o, clock: NewClock(o.Speed)}
	c := r.brokerConfig()
	if c.Queue != daemon.Queue(o.Planner) || c.Queue.Order() != o.Planner.Order() {
		t.Errorf("queue %v, want the demo's planner (order %q)", c.Queue, o.Planner.Order())
	}
	if c.Explain == nil || c.ExplainLater == nil || c.PlanStats == nil {
		t.Fatalf("the demo's broker has no why-texts: Explain %t, ExplainLater %t, PlanStats %t",
			c.Explain != nil, c.ExplainLater != nil, c.PlanStats != nil)
	}
	site := []forecast.Forecast{{Version: 1, Site: "alpha", Horizon: 7200, Nodes: []forecast.Node{{Name: "n1", Procs: 8, Speed: 1}},
		Slots: []forecast.Slot{{Node: "n1", Procs: 8, Start: 0, End: 7200, Price: 1}}}}
	wide := forecast.JobRequest{ID: "j", Procs: 16, Walltime: 3600, MaxPrice: 5, User: "alice", Account: "proj1"}
	if why := c.Explain(site, wide, 0); !strings.Contains(why, "of its 16 processors") {
		t.Errorf("why %q, want what was short of the job's 16 processors", why)
	}
}

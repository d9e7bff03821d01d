package broker

import (
	"strings"
	"testing"

	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/wire"
)

// partsSite is a one-node site free over [0, 10000) at price, whose agent
// says runs (nil: says nothing).
func partsSite(name string, procs int, price float64, runs *bool) forecast.Forecast {
	return forecast.Forecast{Version: 1, Site: name, Seq: 1, Generated: 0, Horizon: 10000,
		Nodes:     []forecast.Node{{Name: name + "1", Procs: procs, Speed: 1, MemMB: 1000, Features: []string{"x86"}}},
		Slots:     []forecast.Slot{{Node: name + "1", Procs: procs, Start: 0, End: 10000, Price: price}},
		RunsParts: runs}
}

func yesNo(v bool) *bool { return &v }

func planParts(t *testing.T, in CycleInput) []forecast.Allocation {
	t.Helper()
	allocs, err := PlanCycle(in, func(fcs []forecast.Forecast, jobs []forecast.JobRequest, notBefore int64) ([]forecast.Allocation, error) {
		return coalloc.PlanQueue(fcs, jobs, coalloc.Options{NotBefore: notBefore, Criterion: forecast.FreeFirst})
	})
	if err != nil {
		t.Fatal(err)
	}
	return allocs
}

// A job with a script is planned only on sites whose agent runs parts (or
// does not say); a job without one goes where it did. alpha, whose agent
// does not run parts, is the cheapest: the script job must skip it.
func TestPlanCycleKeepsScriptJobsOnSitesThatRunParts(t *testing.T) {
	for _, beta := range []*bool{yesNo(true), nil} {
		fcs := []forecast.Forecast{partsSite("alpha", 8, 1, yesNo(false)), partsSite("beta", 8, 2, beta)}
		script, plain := req("g1", 8, 3600, 5), req("g2", 8, 3600, 5)
		script.Features = []string{"x86"}
		allocs := planParts(t, CycleInput{Now: 0, Forecasts: fcs, Jobs: []forecast.JobRequest{script, plain},
			Scripted: map[string]bool{"g1": true}})
		if got := allocs[0].Sites(); len(got) != 1 || got[0] != "beta" {
			t.Fatalf("beta says runs_parts %v: the script job is on %v (%s), want beta", beta != nil, got, allocs[0].Error)
		}
		if got := allocs[1].Sites(); len(got) != 1 || got[0] != "alpha" {
			t.Fatalf("the job without a script is on %v (%s), want alpha (the cheapest)", got, allocs[1].Error)
		}
		if len(fcs[1].Nodes[0].Features) != 1 || len(script.Features) != 1 {
			t.Fatalf("the broker's forecasts or jobs were changed: %v %v", fcs[1].Nodes[0].Features, script.Features)
		}
	}
}

// A job with a script that fits nowhere says why: sites left out because
// they do not run parts are named; with no site running parts, only that.
func TestPlanCycleSaysWhichSitesDoNotRunParts(t *testing.T) {
	fcs := []forecast.Forecast{partsSite("alpha", 16, 1, yesNo(false)), partsSite("beta", 8, 2, yesNo(true))}
	allocs := planParts(t, CycleInput{Forecasts: fcs, Jobs: []forecast.JobRequest{req("g1", 12, 3600, 5)},
		Scripted: map[string]bool{"g1": true}})
	if allocs[0].Placed() || !strings.HasSuffix(allocs[0].Error, "; not planned on (does not run parts: dispatch is off in its agent config): alpha") {
		t.Fatalf("12 processors with a script, 8 on the only site running parts: %+v", allocs[0])
	}
	allocs = planParts(t, CycleInput{Forecasts: fcs[:1], Jobs: []forecast.JobRequest{req("g1", 8, 3600, 5)},
		Scripted: map[string]bool{"g1": true}})
	want := "no-fit: the job has a script, and no fresh site runs parts (does not run parts: dispatch is off in its agent config): alpha"
	if allocs[0].Placed() || allocs[0].Error != want {
		t.Fatalf("no site runs parts: %q, want %q", allocs[0].Error, want)
	}
	why := ExplainParts(fcs, func(f []forecast.Forecast) string { return strings.Join(NoParts(f), ",") + "|" + f[0].Site })
	if why != "|beta; not planned on (does not run parts: dispatch is off in its agent config): alpha" {
		t.Fatalf("explained on %q", why)
	}
}

// A submission with a script counts only the sites that run parts: one
// that only alpha (dispatch off) could hold is refused saying so, and
// with no site running parts every such job is; without a script the
// same job is taken. A site that does not say counts as running them.
func TestAdmitCountsOnlySitesThatRunPartsForAScript(t *testing.T) {
	site := func(name string, procs int, runs *bool) Site {
		f := partsSite(name, procs, 1, runs)
		return Site{Name: name, Forecast: f}
	}
	p := Policy{Grid: CapacityOf([]Site{site("alpha", 240, yesNo(false)), site("beta", 100, yesNo(true)), site("gamma", 50, nil)})}
	withScript := func(r forecast.JobRequest) wire.SubmitRequest {
		s := submitReq("k", r)
		s.Script = []byte("#!/bin/sh\n")
		return s
	}
	if _, rep := Admit(NewState(), p, "alice", submitReq("k", req("", 300, 3600, 1)), 1); rep.Code != wire.CodeOK {
		t.Fatalf("300 processors without a script: %+v", rep)
	}
	if _, rep := Admit(NewState(), p, "alice", withScript(req("", 150, 3600, 1)), 1); rep.Code != wire.CodeOK {
		t.Fatalf("150 processors with a script on beta and gamma: %+v", rep)
	}
	_, rep := Admit(NewState(), p, "alice", withScript(req("", 151, 3600, 1)), 1)
	if rep.Code != wire.CodeNoCapacity || !strings.Contains(rep.Message, "has 150") ||
		!strings.Contains(rep.Message, "only sites that run parts count for a job with a script, not (does not run parts: dispatch is off in its agent config): alpha") {
		t.Fatalf("151 processors with a script: %+v", rep)
	}
	off := Policy{Grid: CapacityOf([]Site{site("alpha", 240, yesNo(false)), site("delta", 8, yesNo(false))})}
	_, rep = Admit(NewState(), off, "alice", withScript(req("", 1, 60, 1)), 1)
	if rep.Code != wire.CodeNoCapacity || !strings.Contains(rep.Message, "no site known runs parts (do not run parts: dispatch is off in their agents' configs): alpha, delta") {
		t.Fatalf("a script where no site runs parts: %+v", rep)
	}
}

// lookahead sites shows what each site's agent says of running parts.
func TestSiteStatusesSayWhetherSitesRunParts(t *testing.T) {
	sites := []Site{{Name: "a", Forecast: partsSite("a", 1, 1, yesNo(false))}, {Name: "b", Forecast: partsSite("b", 1, 1, nil)}}
	st := SiteStatuses(sites, 0, 60)
	if st[0].RunsParts == nil || *st[0].RunsParts || st[1].RunsParts != nil {
		t.Fatalf("runs_parts %v %v, want false and absent", st[0].RunsParts, st[1].RunsParts)
	}
}

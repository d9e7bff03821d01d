package broker

import (
	"testing"

	"lookahead/wire"
)

func TestReconcile(t *testing.T) {
	id := wire.Identity{User: "alice", Account: "proj1"}
	nodes := []wire.NodeProcs{{Node: "n1", Procs: 4}}
	res := func(site, rid, job string, start int64) wire.Reservation {
		return wire.Reservation{ID: rid, Job: job, Site: site, Start: start, End: start + 100, Nodes: nodes, Identity: id}
	}
	believed := map[string][]wire.Reservation{
		"a": {res("a", "g1.0", "g1", 100), res("a", "g2.0", "g2", 100), res("a", "g3.0", "g3", 100)},
		"b": {res("b", "g1.0", "g1", 100)},
		"c": {res("c", "g9.0", "g9", 100)},
	}
	drift := res("a", "g3.0", "g3", 150)
	drift.Identity.Account = "other"
	actual := map[string][]wire.Reservation{
		"a": {res("a", "g1.0", "g1", 100), drift, res("a", "g7.0", "g7", 100)},
		"b": {res("b", "g1.0", "g1", 100)},
		// c did not answer: not judged
	}
	got := Reconcile(believed, actual)
	want := []struct{ kind, site, job string }{
		{wire.DriftDrifted, "a", "g3"}, {wire.DriftMissing, "a", "g2"}, {wire.DriftOrphaned, "a", "g7"},
	}
	if len(got) != len(want) {
		t.Fatalf("findings %+v", got)
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].Site != w.site || got[i].Job != w.job {
			t.Fatalf("finding %d: %+v, want %v", i, got[i], w)
		}
	}
	if f := got[0].Fields; len(f) != 3 || f[0] != "start" || f[1] != "end" || f[2] != "acl" {
		t.Fatalf("drift fields %v", f)
	}
}

func TestBelievedSkipsEndedAndInactive(t *testing.T) {
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
	mustApply(t, s, Event{Kind: EvIntent, Job: "g1", Alloc: twoSiteAlloc("g1")})
	mustApply(t, s, Event{Kind: EvOutcome, Job: "g1", OK: true, Reservations: []wire.Reservation{{ID: "r", Job: "g1", Site: "a", End: 3700}}})
	if b := s.Believed(100); len(b["a"]) != 1 {
		t.Fatalf("believed %v", b)
	}
	if b := s.Believed(3700); len(b["a"]) != 0 {
		t.Fatalf("ended reservation still believed: %v", b)
	}
}

func TestSettledSkipsInFlightAndEnding(t *testing.T) {
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
	mustApply(t, s, Event{Kind: EvIntent, Job: "g1", Alloc: twoSiteAlloc("g1")}) // committing on a and b
	mustApply(t, s, submitted(req("g2", 8, 3600, 2), 10))
	mustApply(t, s, Event{Kind: EvIntent, Job: "g2", Alloc: twoSiteAlloc("g2")})
	mustApply(t, s, Event{Kind: EvOutcome, Job: "g2", Release: []string{"b"}}) // release owed on b only
	fl := s.InFlight()
	if !fl["a"]["g1"] || !fl["b"]["g1"] || !fl["b"]["g2"] || fl["a"]["g2"] {
		t.Fatalf("in flight %v", fl)
	}
	actual := map[string][]wire.Reservation{
		"a": {{ID: "g1.0", Job: "g1", End: 500}, {ID: "x", Job: "x", End: 100}, {ID: "y", Job: "y", End: 500}},
		"b": {{ID: "g2.0", Job: "g2", End: 500}},
	}
	got := Settled(actual, fl, 100)
	if len(got["a"]) != 1 || got["a"][0].Job != "y" || len(got["b"]) != 0 {
		t.Fatalf("settled %v", got)
	}
}

// A dispatched job (every part queued into its reservations, none started
// yet, or some) holds its reservations: an audit then must not call them
// orphans (seen in the demo under load: a job dispatched near the end gave
// one finding).
func TestBelievedKeepsDispatchedJobs(t *testing.T) {
	s, j := reservedWithScript(t)
	for i := range j.Reservations {
		j.Reservations[i].End = 3700
	}
	mustApply(t, s, dispatched("a", "7.vm"))
	mustApply(t, s, dispatched("b", "3.b"))
	if j.State != wire.JobDispatched {
		t.Fatalf("state %s, want dispatched", j.State)
	}
	if b := s.Believed(100); len(b["a"]) != 1 || len(b["b"]) != 1 {
		t.Fatalf("believed %v: the dispatched job's reservations are missing", b)
	}
}

// Issue 22.6: after a kill -9 of Maui, audit --repair re-reserved the
// missing reservation before releasing the orphan holding its processors
// (refused). Orphans are repaired first.
func TestRepairOrderReleasesOrphansFirst(t *testing.T) {
	fs := Reconcile(map[string][]wire.Reservation{"alpha": {{ID: "la.g2.0", Job: "g2", End: 100}}},
		map[string][]wire.Reservation{"alpha": {{ID: "la.g1.0", Job: "g1", End: 100}}})
	if len(fs) != 2 || fs[0].Kind != wire.DriftMissing {
		t.Fatalf("findings %+v (sorted by kind: missing first)", fs)
	}
	order := RepairOrder(fs)
	if fs[order[0]].Kind != wire.DriftOrphaned || fs[order[1]].Kind != wire.DriftMissing {
		t.Fatalf("repair order %v of %+v, want the orphan first", order, fs)
	}
}

// The repair of a missing reservation asks for the job's original
// interval (the site adds its slack again), from now when it started.
func TestRepairRequestIsTheOriginalRequest(t *testing.T) {
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
	mustApply(t, s, Event{Kind: EvIntent, Time: 20, Job: "g1", Alloc: twoSiteAlloc("g1"), Revisions: map[string]uint64{"a": 3, "b": 5}})
	mustApply(t, s, Event{Kind: EvOutcome, Time: 21, Job: "g1", OK: true, Cost: 10,
		Reservations: []wire.Reservation{{ID: "r1", Job: "g1", Site: "a", Start: 100, End: 3700 + 300},
			{ID: "r2", Job: "g1", Site: "b", Start: 100, End: 3700 + 300, Submit: "-A la.acct4 -W x=FLAGS:ADVRES:r2 -N la.g1.1"}}})
	r, ok := RepairRequest(s.Job("g1"), "a", 50, "audit")
	if !ok || r.Start != 100 || r.Duration != 3600 || r.Identity.User != "alice" || len(r.Nodes) != 1 || r.Nodes[0].Node != "a1" || r.Bind != "" {
		t.Fatalf("repair request %+v %v, want start 100 for 3600 s on a1, no binding", r, ok)
	}
	// Issue 35: the repair keeps the binding the parts were told.
	if r, _ := RepairRequest(s.Job("g1"), "b", 50, "audit"); r.Bind != "la.acct4" {
		t.Fatalf("repair on b binds %q, want la.acct4 (its recorded submit options)", r.Bind)
	}
	if r, _ := RepairRequest(s.Job("g1"), "a", 700, "audit"); r.Start != 700 || r.Duration != 3000 {
		t.Fatalf("after the start: %+v, want 700 for 3000 s", r)
	}
	if _, ok := RepairRequest(s.Job("g1"), "c", 50, "audit"); ok {
		t.Fatal("a site outside the allocation")
	}
}

// Issue 22.6: after a Maui restart the restored reservation's ACL names
// alice+ and la.acct0+ (diagnose -r "USER==alice++*"): the audit compares
// the binding, not only names, times and nodes.
func TestReconcileComparesTheBinding(t *testing.T) {
	made := wire.Reservation{ID: "la.g1.0", Job: "g1", Start: 10, End: 100, Nodes: []wire.NodeProcs{{Node: "vm", Procs: 4}},
		Identity: wire.Identity{User: "alice", Account: "proj1"}, Submit: "-A la.acct0 -W x=FLAGS:ADVRES:la.g1.0 -N la.g1.0"}
	restored := made
	restored.Identity.User = "alice+"
	rebound := made
	rebound.Submit = "-A la.acct0+ -W x=FLAGS:ADVRES:la.g1.0 -N la.g1.0"
	for _, have := range []wire.Reservation{restored, rebound} {
		fs := Reconcile(map[string][]wire.Reservation{"vm": {made}}, map[string][]wire.Reservation{"vm": {have}})
		if len(fs) != 1 || fs[0].Kind != wire.DriftDrifted || len(fs[0].Fields) != 1 || fs[0].Fields[0] != "acl" {
			t.Fatalf("%+v: findings %+v, want drifted on acl", have, fs)
		}
	}
}

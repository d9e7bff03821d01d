package broker

import (
	"encoding/json"
	"reflect"
	"testing"

	"lookahead/wire"
)

func finishedJob(t *testing.T, s *State, id string, at int64) {
	t.Helper()
	mustApply(t, s, submitted(req(id, 8, 3600, 2), at))
	mustApply(t, s, Event{Kind: EvIntent, Time: at, Job: id, Alloc: twoSiteAlloc(id)})
	mustApply(t, s, Event{Kind: EvOutcome, Time: at, Job: id, OK: true, Cost: 10})
	for _, site := range []string{"a", "b"} {
		mustApply(t, s, Event{Kind: EvSite, Time: at + 100, Job: id, Site: site, State: SiteFinished})
	}
}

// Issue 12.10(f): ended jobs are kept for the retention period, then
// forgotten; what they spent stays charged.
func TestForgetKeepsBudgetsAndActiveJobs(t *testing.T) {
	s := NewState()
	finishedJob(t, s, "g1", 1000)
	finishedJob(t, s, "g2", 5000)
	mustApply(t, s, submitted(req("g3", 1, 60, 1), 1000)) // waiting: kept however old
	mustApply(t, s, submitted(req("g4", 1, 60, 1), 1000))
	mustApply(t, s, Event{Kind: EvCancelled, Time: 1000, Job: "g4", Release: []string{"a"}}) // owes a release: kept
	used := s.Used("proj1", false)
	if n := s.Forget(2000); n != 1 || s.Job("g1") != nil || s.Job("g2") == nil || s.Job("g3") == nil || s.Job("g4") == nil {
		t.Fatalf("forgot %d; g1 %v g2 %v g3 %v g4 %v", n, s.Job("g1"), s.Job("g2"), s.Job("g3"), s.Job("g4"))
	}
	if got := s.Used("proj1", false); got != used || s.Used("alice", true) != used {
		t.Fatalf("budget use %v after forgetting, was %v", got, used)
	}
	if s.ByRequest("req-g1") != nil {
		t.Fatal("the forgotten job's request id still resolves")
	}
	if id := s.NextID(); id != "g5" {
		t.Fatalf("next id %s, want g5 (ids are not reused)", id)
	}
}

// A snapshot, encoded and decoded, rebuilds the same state; events after
// it apply as they would have.
func TestSnapshotRoundTrip(t *testing.T) {
	s := NewState()
	finishedJob(t, s, "g1", 1000)
	finishedJob(t, s, "g2", 5000)
	mustApply(t, s, submitted(req("g3", 1, 60, 1), 6000))
	mustApply(t, s, Event{Kind: EvIntent, Time: 6001, Job: "g3", Alloc: twoSiteAlloc("g3"), Revisions: map[string]uint64{"a": 7}})
	mustApply(t, s, Event{Kind: EvOutcome, Time: 6002, Job: "g3", Message: "rolled back", Release: []string{"a", "b"}})
	s.Forget(2000)
	data, err := json.Marshal(s.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var sn Snapshot
	if err := json.Unmarshal(data, &sn); err != nil {
		t.Fatal(err)
	}
	r, err := FromSnapshot(sn)
	if err != nil {
		t.Fatal(err)
	}
	if !sameState(r, s) {
		t.Fatalf("restored state differs:\n%+v\n%+v", r, s)
	}
	next := Event{Kind: EvReleased, Time: 6003, Job: "g3", Site: "a"}
	mustApply(t, s, next)
	mustApply(t, r, next)
	if !reflect.DeepEqual(r.Job("g3"), s.Job("g3")) || r.NextID() != "g4" {
		t.Fatal("an event after the snapshot applies differently")
	}
	if st := r.Job("g2"); st.State != wire.JobFinished || st.Cost != 10 {
		t.Fatalf("g2 restored as %+v", st)
	}
}

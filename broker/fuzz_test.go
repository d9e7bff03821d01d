package broker

import (
	"bytes"
	"encoding/json"
	"testing"

	"lookahead/wire"
)

// FuzzApply feeds arbitrary event sequences (JSON lines) to the queue: it
// must never panic, refused events must change nothing visible, and a job's
// state must always be a known one.
func FuzzApply(f *testing.F) {
	seed := []Event{
		submitted(req("g1", 8, 3600, 2), 10),
		{Kind: EvIntent, Time: 20, Job: "g1", Alloc: twoSiteAlloc("g1")},
		{Kind: EvOutcome, Time: 21, Job: "g1", OK: true, Cost: 7},
		{Kind: EvSite, Time: 22, Job: "g1", Site: "a", State: SiteStarted},
		{Kind: EvCancelled, Time: 23, Job: "g1", Release: []string{"a"}},
		{Kind: EvReleased, Time: 24, Job: "g1", Site: "a"},
	}
	for _, e := range seed {
		data, _ := json.Marshal(e)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewState()
		mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
		var e Event
		if json.Unmarshal(data, &e) != nil {
			return
		}
		before := s.Job("g1").Status(nil)
		if err := s.Apply(e); err != nil {
			if after := s.Job("g1"); after != nil && after.State != before.State {
				t.Fatalf("refused event changed state %s → %s", before.State, after.State)
			}
		}
		for _, j := range s.Jobs() {
			switch j.State {
			case wire.JobWaiting, wire.JobCommitting, wire.JobReserved, wire.JobRunning, wire.JobFinished,
				wire.JobFailed, wire.JobCancelled, wire.JobExpired:
			default:
				t.Fatalf("unknown state %q", j.State)
			}
		}
		s.Holds()
		s.Believed(0)
		s.OwedReleases(1 << 40)
		// A snapshot of whatever state came out rebuilds it exactly.
		data, err := json.Marshal(s.Snapshot())
		if err != nil {
			return // a non-finite number: the broker skips such a snapshot and says so
		}
		var sn Snapshot
		if err := json.Unmarshal(data, &sn); err != nil {
			t.Fatalf("snapshot does not decode: %v", err)
		}
		r, err := FromSnapshot(sn)
		if err != nil {
			t.Fatalf("snapshot does not restore: %v", err)
		}
		again, _ := json.Marshal(r.Snapshot())
		if !bytes.Equal(again, data) {
			t.Fatalf("snapshot round trip changed the state:\n%s\n%s", data, again)
		}
	})
}

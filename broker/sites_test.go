package broker

import (
	"strings"
	"testing"
)

// A site that does not answer requests is out of planning whatever it
// publishes, until it answers; the first silence dates it.
func TestUnansweredSiteOutUntilItAnswers(t *testing.T) {
	s := take(t, nil, fc(1, 1000), 1000, Taken)
	s = NotAnswering(&s, "alpha", "reserve g1: nats: no responders available for request", 1010)
	s = NotAnswering(&s, "alpha", "release g1: nats: no responders available for request", 1040)
	if s.UnansweredSince != 1010 || !strings.Contains(s.Unanswered, "release g1") {
		t.Fatalf("unanswered %q since %d, want the latest reason since 1010", s.Unanswered, s.UnansweredSince)
	}
	s = take(t, &s, fc(2, 1050), 1050, Taken)
	if s.Unanswered == "" || !s.Stale(1050, 600) {
		t.Fatalf("a new forecast brought an unanswering site back: %+v", s)
	}
	s, _ = TakeHeartbeat(&s, "alpha", hb(2, 1060), 1060, skew)
	fresh, _, excluded := Fresh([]Site{s}, 1060, 600)
	if len(fresh) != 0 || len(excluded) != 1 {
		t.Fatalf("fresh %d excluded %v, want alpha excluded", len(fresh), excluded)
	}
	st := SiteStatuses([]Site{s}, 1060, 600)[0]
	if !st.Excluded || st.Unanswered != s.Unanswered || st.UnansweredSince != 1010 {
		t.Fatalf("status %+v", st)
	}
	s = Answered(s)
	if fresh, _, _ := Fresh([]Site{s}, 1060, 600); len(fresh) != 1 {
		t.Fatalf("a site that answered is still out: %+v", s)
	}
}

// A site whose only forecast was refused was never heard: age 0, not
// the time since 1970.
func TestNeverHeardSiteHasNoAge(t *testing.T) {
	s := Refuse(nil, "alpha", "forecast refused: bad", true)
	if st := SiteStatuses([]Site{s}, 1_800_000_000, 600)[0]; st.LastSeen != 0 || st.Age != 0 {
		t.Fatalf("status %+v, want last_seen 0 and age 0", st)
	}
}

// A release owed on one site holds the job back there only.
func TestOwesReleaseOnlyOnItsSite(t *testing.T) {
	j := &Job{PendingRelease: map[string]int64{"alpha": 0}}
	if !j.OwesReleaseOn([]string{"beta", "alpha"}) || j.OwesReleaseOn([]string{"beta"}) {
		t.Fatal("owed release on alpha judged wrong")
	}
}

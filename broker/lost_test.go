package broker

import (
	"strings"
	"testing"

	"lookahead/wire"
)

func reservedJob(t *testing.T) (*State, *Job) {
	t.Helper()
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
	mustApply(t, s, Event{Kind: EvIntent, Time: 20, Job: "g1", Alloc: twoSiteAlloc("g1"), Revisions: map[string]uint64{"a": 3, "b": 5}})
	mustApply(t, s, Event{Kind: EvOutcome, Time: 21, Job: "g1", OK: true, Cost: 10,
		Reservations: []wire.Reservation{{ID: "r1", Job: "g1", Site: "a", End: 3700}, {ID: "r2", Job: "g1", Site: "b", End: 3700}}})
	return s, s.Job("g1")
}

// A site whose scheduler lost a reservation it could not re-create sends
// the job back to waiting, owing releases on every site of the plan.
func TestLostReservationPlansTheJobAgain(t *testing.T) {
	s, j := reservedJob(t)
	mustApply(t, s, Event{Kind: EvSite, Time: 50, Job: "g1", Site: "a", State: SiteLost, Message: "maui restart: la.g1.0 missing"})
	if j.State != wire.JobWaiting || j.Alloc != nil || len(j.Reservations) != 0 {
		t.Fatalf("after lost: state %s alloc %v reservations %v, want waiting with nothing held", j.State, j.Alloc, j.Reservations)
	}
	if _, a := j.PendingRelease["a"]; !a {
		t.Fatalf("pending releases %v, want a and b", j.PendingRelease)
	}
	if _, b := j.PendingRelease["b"]; !b {
		t.Fatalf("pending releases %v, want a and b", j.PendingRelease)
	}
	if !strings.Contains(j.Message, "lost on a") {
		t.Fatalf("message %q", j.Message)
	}
	if w := s.InState(wire.JobWaiting); len(w) != 1 {
		t.Fatalf("waiting jobs %d, want the lost one", len(w))
	}
}

// A running job keeps going when a reservation is lost: its part runs.
func TestLostReservationOfARunningJobIsANote(t *testing.T) {
	s, j := reservedJob(t)
	mustApply(t, s, Event{Kind: EvSite, Time: 100, Job: "g1", Site: "a", State: SiteStarted})
	mustApply(t, s, Event{Kind: EvSite, Time: 150, Job: "g1", Site: "b", State: SiteLost, Message: "gone"})
	if j.State != wire.JobRunning || j.Alloc == nil || !strings.Contains(j.Message, "gone") {
		t.Fatalf("state %s alloc %v message %q, want running with a note", j.State, j.Alloc, j.Message)
	}
}

// A foreign job in the reservation is told to the grid user and is never
// taken for the part: a reserved job stays reserved.
func TestForeignJobIsANoteNeverThePart(t *testing.T) {
	s, j := reservedJob(t)
	mustApply(t, s, Event{Kind: EvSite, Time: 60, Job: "g1", Site: "a", State: SiteForeign, Message: "foreign job 12.vm (alice) in reservation la.g1.0"})
	if j.State != wire.JobReserved || !strings.Contains(j.Message, "foreign job 12.vm") {
		t.Fatalf("state %s message %q, want reserved with the foreign job named", j.State, j.Message)
	}
	if j.SiteStates["a"] != "" {
		t.Fatalf("site states %v: a foreign job is no part state", j.SiteStates)
	}
}

// Issue 35 (left): a site that re-created a reservation bound to another
// account (the parts' one was taken) replaces the job's reservations
// there, so status gives the submit options that get in, and the job's
// message says why; the other site's are kept, and the job stays reserved.
func TestReboundReservationReplacesTheSubmitOptions(t *testing.T) {
	s, j := reservedJob(t)
	now := wire.Reservation{ID: "r1", Job: "g1", Site: "a", End: 3700, Submit: "-A la.acct3 -W x=FLAGS:ADVRES:r1"}
	mustApply(t, s, Event{Kind: EvSite, Time: 60, Job: "g1", Site: "a", State: SiteRebound, Reservations: []wire.Reservation{now},
		Message: "reservation r1 re-created as r1, bound to la.acct3 (was la.acct0: the account is taken; parts submitted with -A la.acct0 no longer get in)"})
	if j.State != wire.JobReserved || !strings.Contains(j.Message, "a: reservation r1") || !strings.Contains(j.Message, "no longer get in") {
		t.Fatalf("state %s message %q, want reserved, with the rebinding told", j.State, j.Message)
	}
	if len(j.Reservations) != 2 {
		t.Fatalf("reservations %+v, want a's replaced and b's kept", j.Reservations)
	}
	for _, r := range j.Reservations {
		if r.Site == "a" && r.Submit != now.Submit || r.Site == "b" && r.ID != "r2" {
			t.Errorf("reservation %+v after the rebinding", r)
		}
	}
	if j.SiteStates["a"] != "" {
		t.Fatalf("site states %v: a rebinding is no part state", j.SiteStates)
	}
}

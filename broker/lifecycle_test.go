package broker

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"lookahead/wire"
)

func intp(n int) *int { return &n }

// reservedWithScript is g1 (8 procs over sites a and b, reserved over
// [100, 3700) at cost 10) submitted with a script.
func reservedWithScript(t *testing.T) (*State, *Job) {
	t.Helper()
	s := NewState()
	e := submitted(req("g1", 8, 3600, 2), 10)
	e.Script = []byte("#!/bin/sh\nhostname\n")
	mustApply(t, s, e)
	mustApply(t, s, Event{Kind: EvIntent, Time: 20, Job: "g1", Alloc: twoSiteAlloc("g1")})
	mustApply(t, s, Event{Kind: EvOutcome, Time: 21, Job: "g1", OK: true, Cost: 10,
		Reservations: []wire.Reservation{{ID: "la.g1.0", Job: "g1", Site: "a"}, {ID: "la.g1.0", Job: "g1", Site: "b"}}})
	return s, s.Job("g1")
}

func dispatched(site, id string) Event {
	return Event{Kind: EvDispatched, Time: 22, Job: "g1", Site: site,
		Part: &wire.PartStatus{LocalID: id, LocalUser: "alice", Output: "vm:/home/alice/la.g1.out"}}
}

func partEvent(site, state string, at int64, exit *int) Event {
	return Event{Kind: EvSite, Time: at, Job: "g1", Site: site, State: state,
		Part: &wire.PartStatus{LocalID: site + "-7", Start: 101, End: at * boolInt(state != SiteStarted), ExitStatus: exit}}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func TestDispatchedJobRunsToFinish(t *testing.T) {
	s, j := reservedWithScript(t)
	if !j.Dispatched() || len(j.Parts) != 2 || j.Parts["b"].Part != 1 || j.Parts["a"].State != wire.PartPending {
		t.Fatalf("parts after reserve: %+v", j.PartList())
	}
	if reqs := Dispatches(j, "broker"); len(reqs) != 2 || reqs[1].Site != "b" || reqs[1].Part != 1 || reqs[0].Walltime != 3600 ||
		reqs[0].Start != 100 || string(reqs[0].Script) != "#!/bin/sh\nhostname\n" || len(reqs[0].Parts) != 2 {
		t.Fatalf("dispatches: %+v", reqs)
	}
	mustApply(t, s, dispatched("a", "7.vm"))
	if j.State != wire.JobReserved || len(Dispatches(j, "broker")) != 1 {
		t.Fatalf("one part dispatched: %s", j.State)
	}
	mustApply(t, s, dispatched("b", "3.b"))
	if j.State != wire.JobDispatched {
		t.Fatalf("all dispatched: %s", j.State)
	}
	mustApply(t, s, partEvent("a", SiteStarted, 101, nil))
	if j.State != wire.JobDispatched {
		t.Fatalf("one of two started: %s, want dispatched", j.State)
	}
	mustApply(t, s, partEvent("b", SiteStarted, 103, nil))
	if j.State != wire.JobRunning || j.Parts["a"].LocalUser != "alice" || j.Parts["a"].Start != 101 {
		t.Fatalf("all started: %s %+v", j.State, j.Parts["a"])
	}
	if st := j.Status(nil); st.Started != 101 {
		t.Fatalf("started %d, want the first part's start 101", st.Started)
	}
	mustApply(t, s, partEvent("a", SiteFinished, 1900, intp(0)))
	if _, over := Conclude(j, 1900, 60); over {
		t.Fatal("concluded with a part still running")
	}
	mustApply(t, s, partEvent("b", SiteFinished, 1900, intp(0)))
	e, over := Conclude(j, 1900, 60)
	if !over || e.State != wire.JobFinished || len(e.Stop) != 0 || !slices.Equal(e.Release, []string{"a", "b"}) {
		t.Fatalf("conclusion: %+v", e)
	}
	if want := 10 * 1800.0 / 3600; math.Abs(e.Cost-want) > 1e-9 {
		t.Fatalf("early finish charged %v, want %v (half the reservation held)", e.Cost, want)
	}
	mustApply(t, s, e)
	if j.State != wire.JobFinished || j.Cost != e.Cost || len(s.OwedReleases(1900)) != 2 || len(s.OwedStops(1900)) != 0 {
		t.Fatalf("after conclusion: %s cost %v", j.State, j.Cost)
	}
	if used := s.Used("proj1", false); math.Abs(used-5) > 1e-9 {
		t.Fatalf("budget used %v, want the final charge 5", used)
	}
	if err := s.Apply(partEvent("a", SiteFailed, 2000, nil)); err == nil {
		t.Fatal("a part event applied to a finished job")
	}
}

func TestDispatchedJobFailsWhenAPartFails(t *testing.T) {
	s, j := reservedWithScript(t)
	mustApply(t, s, dispatched("a", "7.vm"))
	mustApply(t, s, dispatched("b", "3.b"))
	mustApply(t, s, partEvent("a", SiteStarted, 101, nil))
	mustApply(t, s, partEvent("b", SiteStarted, 101, nil))
	mustApply(t, s, partEvent("b", SiteFinished, 1000, intp(3)))
	if j.Parts["b"].State != wire.PartFailed {
		t.Fatalf("exit 3 is %s, want failed", j.Parts["b"].State)
	}
	e, over := Conclude(j, 1000, 60)
	if !over || e.State != wire.JobFailed || !slices.Equal(e.Stop, []string{"a"}) || !strings.Contains(e.Message, "exit status 3") {
		t.Fatalf("conclusion: %+v", e)
	}
	if want := 10 * 900.0 / 3600; math.Abs(e.Cost-want) > 1e-9 {
		t.Fatalf("user's failure charged %v, want the time held %v", e.Cost, want)
	}
	mustApply(t, s, e)
	if got := s.OwedStops(1000); len(got) != 1 || got[0] != (Owed{"g1", "a"}) || j.Parts["a"].State != wire.PartDeleted {
		t.Fatalf("owed stops %v, part a %s", got, j.Parts["a"].State)
	}
	mustApply(t, s, Event{Kind: EvStopped, Time: 1001, Job: "g1", Site: "a"})
	if len(s.OwedStops(2000)) != 0 {
		t.Fatal("stop still owed")
	}
	if err := s.Apply(Event{Kind: EvStopped, Time: 1002, Job: "g1", Site: "a"}); err == nil {
		t.Fatal("a second stop applied")
	}
}

func TestDeletedPartWithoutExitStatusFails(t *testing.T) {
	s, j := reservedWithScript(t)
	mustApply(t, s, dispatched("a", "7.vm"))
	mustApply(t, s, Event{Kind: EvSite, Time: 50, Job: "g1", Site: "a", State: SiteFinished, Part: &wire.PartStatus{LocalID: "7.vm"}})
	e, over := Conclude(j, 50, 60)
	if !over || e.State != wire.JobFailed || e.Cost != 0 || !strings.Contains(e.Message, "no exit status") {
		t.Fatalf("deleted before its start: %+v", e)
	}
}

func TestPartThatDoesNotStartInTimeFailsTheJob(t *testing.T) {
	s, j := reservedWithScript(t)
	mustApply(t, s, dispatched("a", "7.vm"))
	mustApply(t, s, dispatched("b", "3.b"))
	mustApply(t, s, partEvent("a", SiteStarted, 100, nil))
	if _, over := Conclude(j, 159, 60); over {
		t.Fatal("concluded within the grace period")
	}
	e, over := Conclude(j, 160, 60)
	if !over || e.State != wire.JobFailed || e.Cost != 0 || !slices.Equal(e.Stop, []string{"a", "b"}) ||
		!strings.Contains(e.Message, "part 1 on b did not start within 1m") {
		t.Fatalf("late start: %+v", e)
	}
}

// Issue 35: a foreign job that held the part's processors past the
// reservation start (reported with when it leaves at the latest) moves
// the part's start grace: the part has grace after the foreign job left.
func TestForeignJobMovesThePartsStartGrace(t *testing.T) {
	s, j := reservedWithScript(t)
	mustApply(t, s, dispatched("a", "7.vm"))
	mustApply(t, s, dispatched("b", "3.b"))
	mustApply(t, s, partEvent("a", SiteStarted, 100, nil))
	mustApply(t, s, Event{Kind: EvSite, Time: 90, Job: "g1", Site: "b", State: SiteForeign,
		Message: "foreign job in reservation: local job 5.b", Part: &wire.PartStatus{BlockedUntil: 196}})
	if _, over := Conclude(j, 255, 60); over {
		t.Fatal("concluded before the grace after the foreign job left")
	}
	e, over := Conclude(j, 256, 60)
	if !over || e.State != wire.JobFailed || !strings.Contains(e.Message, "a foreign job held its processors until 196") {
		t.Fatalf("late start after the foreign job: %+v", e)
	}
	// A report after the part started changes nothing.
	mustApply(t, s, partEvent("b", SiteStarted, 200, nil))
	mustApply(t, s, Event{Kind: EvSite, Time: 210, Job: "g1", Site: "b", State: SiteForeign, Part: &wire.PartStatus{BlockedUntil: 5000}})
	if p := j.Parts["b"]; p.BlockedUntil != 196 {
		t.Fatalf("blocked until %d after the start", p.BlockedUntil)
	}
}

func TestRefusedDispatchFailsWithRefund(t *testing.T) {
	s, j := reservedWithScript(t)
	mustApply(t, s, dispatched("a", "7.vm"))
	mustApply(t, s, Event{Kind: EvDispatched, Time: 23, Job: "g1", Site: "b", State: wire.PartFailed,
		Part: &wire.PartStatus{}, Message: "forbidden: local user root"})
	e, over := Conclude(j, 23, 60)
	if !over || e.State != wire.JobFailed || e.Cost != 0 || !slices.Equal(e.Stop, []string{"a"}) ||
		!strings.Contains(e.Message, "not dispatched: forbidden") {
		t.Fatalf("refused dispatch: %+v", e)
	}
}

func TestLostPartFailsAfterTheReservationEnd(t *testing.T) {
	s, j := reservedWithScript(t)
	mustApply(t, s, partEvent("a", SiteStarted, 100, nil)) // seen running before the dispatch reply
	mustApply(t, s, partEvent("b", SiteStarted, 100, nil))
	if j.State != wire.JobRunning || j.Parts["a"].LocalID != "a-7" {
		t.Fatalf("started without a recorded dispatch: %s %+v", j.State, j.Parts["a"])
	}
	if _, over := Conclude(j, 3759, 60); over {
		t.Fatal("concluded before end+grace")
	}
	e, over := Conclude(j, 3760, 60)
	if !over || e.State != wire.JobFailed || e.Cost != 0 || len(e.Stop) != 2 {
		t.Fatalf("lost: %+v", e)
	}
}

func TestCancelDispatchedJobDeletesParts(t *testing.T) {
	s, j := reservedWithScript(t)
	mustApply(t, s, dispatched("a", "7.vm"))
	mustApply(t, s, dispatched("b", "3.b"))
	mustApply(t, s, partEvent("a", SiteStarted, 100, nil))
	mustApply(t, s, partEvent("b", SiteStarted, 100, nil))
	e, reply := DecideCancel(s, Policy{}, "alice", "g1", 1000)
	if reply.Code != wire.CodeOK || !slices.Equal(e.Stop, []string{"a", "b"}) || len(e.Release) != 2 {
		t.Fatalf("cancel running: %+v %+v", e, reply)
	}
	mustApply(t, s, e)
	if want := 2.5; j.State != wire.JobCancelled || math.Abs(j.Cost-want) > 1e-9 || math.Abs(s.Used("proj1", false)-want) > 1e-9 {
		t.Fatalf("cancelled running: %s cost %v used %v, want %v", j.State, j.Cost, s.Used("proj1", false), want)
	}
	if len(s.OwedStops(1000)) != 2 || j.Parts["a"].State != wire.PartDeleted {
		t.Fatalf("stops %v", s.OwedStops(1000))
	}
}

func TestCancelReservedDispatchedJobRefunds(t *testing.T) {
	s, j := reservedWithScript(t)
	mustApply(t, s, dispatched("a", "7.vm"))
	e, reply := DecideCancel(s, Policy{}, "alice", "g1", 50)
	if reply.Code != wire.CodeOK || !slices.Equal(e.Stop, []string{"a", "b"}) {
		t.Fatalf("cancel: %+v %+v", e, reply)
	}
	mustApply(t, s, e)
	if j.Cost != 0 || s.Used("proj1", false) != 0 {
		t.Fatalf("cancel before start charged %v", j.Cost)
	}
}

func TestCancelOfHandSubmittedRunningJobStillRefused(t *testing.T) {
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
	mustApply(t, s, Event{Kind: EvIntent, Time: 20, Job: "g1", Alloc: twoSiteAlloc("g1")})
	mustApply(t, s, Event{Kind: EvOutcome, Time: 21, Job: "g1", OK: true, Cost: 10})
	mustApply(t, s, Event{Kind: EvSite, Time: 100, Job: "g1", Site: "a", State: SiteStarted})
	if _, reply := DecideCancel(s, Policy{}, "alice", "g1", 200); reply.Code == wire.CodeOK {
		t.Fatal("cancelled a running job whose parts lookahead does not know")
	}
}

func TestAdmitKeepsScriptAndBoundsIt(t *testing.T) {
	s := NewState()
	r := req("", 8, 3600, 2)
	e, reply := Admit(s, Policy{}, "alice", wire.SubmitRequest{RequestID: "x", Job: r, Script: []byte("echo hi\n")}, 5)
	if reply.Code != wire.CodeOK || string(e.Script) != "echo hi\n" {
		t.Fatalf("admit: %+v", reply)
	}
	mustApply(t, s, e)
	if got := s.Job(reply.Job).Status(nil); got.ScriptBytes != 8 {
		t.Fatalf("status script bytes %d", got.ScriptBytes)
	}
	big := make([]byte, wire.MaxScriptBytes+1)
	if _, reply := Admit(s, Policy{}, "alice", wire.SubmitRequest{RequestID: "y", Job: r, Script: big}, 6); reply.Code != wire.CodeInvalid {
		t.Fatalf("oversized script: %+v", reply)
	}
}

func TestChargeClamps(t *testing.T) {
	_, j := reservedWithScript(t)
	for _, c := range []struct {
		end   int64
		fault bool
		want  float64
	}{{50, false, 0}, {100, false, 0}, {1900, false, 5}, {3700, false, 10}, {9999, false, 10}, {1900, true, 0}} {
		if got := Charge(j, c.end, c.fault); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Charge(end %d, site fault %v) = %v, want %v", c.end, c.fault, got, c.want)
		}
	}
}

// A dispatched job in flight (script, parts, a stop owed) survives a
// snapshot and its restore, and goes on the same way after it.
func TestSnapshotKeepsDispatchedJob(t *testing.T) {
	s, j := reservedWithScript(t)
	mustApply(t, s, dispatched("a", "7.vm"))
	mustApply(t, s, dispatched("b", "3.b"))
	mustApply(t, s, partEvent("a", SiteStarted, 101, nil))
	mustApply(t, s, partEvent("b", SiteStarted, 103, nil))
	mustApply(t, s, partEvent("a", SiteFailed, 500, intp(3)))
	e, over := Conclude(j, 500, 60)
	if !over {
		t.Fatal("not concluded")
	}
	mustApply(t, s, e)
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
	if !reflect.DeepEqual(r, s) {
		t.Fatalf("restored state differs:\n%+v\n%+v", r.Job("g1"), j)
	}
	rj := r.Job("g1")
	if string(rj.Script) != "#!/bin/sh\nhostname\n" || rj.Parts["b"].State != wire.PartDeleted || len(r.OwedStops(500)) != 1 {
		t.Fatalf("restored job: script %q parts %+v stops %v", rj.Script, rj.PartList(), r.OwedStops(500))
	}
	stopped := Event{Kind: EvStopped, Time: 501, Job: "g1", Site: "b"}
	mustApply(t, s, stopped)
	mustApply(t, r, stopped)
	if !reflect.DeepEqual(r.Job("g1"), s.Job("g1")) || len(r.OwedStops(501)) != 0 {
		t.Fatal("the stop applies differently after the restore")
	}
}

// TestByHandJobStarted: a job whose parts are submitted by hand started
// when the first site said so; a later report does not move it, and the
// finished job keeps it.
func TestByHandJobStarted(t *testing.T) {
	s := NewState()
	mustApply(t, s, submitted(req("g1", 8, 3600, 2), 10))
	mustApply(t, s, Event{Kind: EvIntent, Time: 20, Job: "g1", Alloc: twoSiteAlloc("g1")})
	mustApply(t, s, Event{Kind: EvOutcome, Time: 21, Job: "g1", OK: true, Cost: 10,
		Reservations: []wire.Reservation{{ID: "la.g1.0", Job: "g1", Site: "a"}, {ID: "la.g1.0", Job: "g1", Site: "b"}}})
	j := s.Job("g1")
	if st := j.Status(nil); st.Started != 0 {
		t.Fatalf("reserved job started at %d", st.Started)
	}
	for _, e := range []Event{{Time: 130, Site: "b", State: SiteStarted}, {Time: 150, Site: "a", State: SiteStarted},
		{Time: 900, Site: "a", State: SiteFinished}, {Time: 950, Site: "b", State: SiteFinished}} {
		e.Kind, e.Job = EvSite, "g1"
		mustApply(t, s, e)
	}
	if st := j.Status(nil); st.State != wire.JobFinished || st.Started != 130 {
		t.Fatalf("finished job: %s, started %d, want 130", st.State, st.Started)
	}
}

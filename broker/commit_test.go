package broker

import (
	"errors"
	"strings"
	"testing"

	"lookahead/forecast"
	"lookahead/wire"
)

func TestReserveRequestsGroupBySite(t *testing.T) {
	a := forecast.Allocation{Job: "g1", Start: 100, End: 400, Parts: []forecast.Part{
		{Site: "a", Node: "a1", Procs: 4}, {Site: "b", Node: "b1", Procs: 2}, {Site: "a", Node: "a2", Procs: 4}}}
	reqs := ReserveRequests(req("g1", 10, 300, 1), a, map[string]uint64{"a": 7, "b": 9}, "broker")
	if len(reqs) != 2 || reqs[0].Site != "a" || reqs[1].Site != "b" {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[0]
	if r.Revision != 7 || r.Procs != 0 || len(r.Nodes) != 2 || r.Nodes[0].Procs+r.Nodes[1].Procs != 8 || r.Duration != 300 || r.Start != 100 ||
		r.Identity != (wire.Identity{User: "alice", Account: "proj1"}) || r.Type != wire.TypeReserve {
		t.Fatalf("site a request %+v", r)
	}
}

func TestDue(t *testing.T) {
	a := forecast.Allocation{Job: "g", Start: 700, End: 800, Parts: []forecast.Part{{Site: "a", Node: "n", Procs: 1}}}
	if !Due(a, 100, 600) || Due(a, 99, 600) || Due(forecast.Allocation{Job: "g", Error: "no fit"}, 0, 1e9) {
		t.Fatal("Due wrong")
	}
}

func TestJudgeAllOrNothing(t *testing.T) {
	reqs := []wire.ReserveRequest{{Site: "a"}, {Site: "b"}, {Site: "c"}}
	ok := func(site string) Answer {
		return Answer{Site: site, Reply: &wire.ReserveReply{Code: wire.CodeOK, Reservations: []wire.Reservation{{ID: site + ".1", Job: "g1"}}}}
	}
	j := Judge(reqs, []Answer{ok("a"), ok("b"), ok("c")})
	if !j.OK || len(j.Reservations) != 3 || j.Reservations[1].Site != "b" {
		t.Fatalf("all ok: %+v", j)
	}
	stale := Answer{Site: "b", Reply: &wire.ReserveReply{Code: wire.CodeStale, Message: "revision 9"}}
	j = Judge(reqs, []Answer{ok("a"), stale, {Site: "c", Err: errors.New("timeout")}})
	if j.OK || strings.Join(j.Release, ",") != "a,c" || !strings.Contains(j.Message, "b: stale") || len(j.Reservations) != 0 {
		t.Fatalf("one stale, one silent: %+v", j)
	}
	j = Judge(reqs, []Answer{ok("a"), ok("b")})
	if j.OK || strings.Join(j.Release, ",") != "a,b,c" {
		t.Fatalf("missing answer: %+v", j)
	}
}

// A site that answers expired did nothing: the commit fails and only the
// sites that reserved are released.
func TestJudgeExpiredSiteIsNotReleased(t *testing.T) {
	reqs := []wire.ReserveRequest{{Site: "a"}, {Site: "b"}}
	ok := Answer{Site: "a", Reply: &wire.ReserveReply{Code: wire.CodeOK, Reservations: []wire.Reservation{{ID: "a.1", Job: "g1"}}}}
	expired := Answer{Site: "b", Reply: &wire.ReserveReply{Code: wire.CodeExpired, Message: "request expired"}}
	j := Judge(reqs, []Answer{ok, expired})
	if j.OK || strings.Join(j.Release, ",") != "a" || !strings.Contains(j.Message, "b: expired") {
		t.Fatalf("one expired: %+v", j)
	}
}

// A site that answers conflict holds another reservation of the job (not
// what this commit asked for): the commit fails and that site is released
// too, so the job's next attempt there starts clean.
func TestJudgeConflictSiteIsReleased(t *testing.T) {
	reqs := []wire.ReserveRequest{{Site: "a"}, {Site: "b"}}
	ok := Answer{Site: "a", Reply: &wire.ReserveReply{Code: wire.CodeOK, Reservations: []wire.Reservation{{ID: "a.1", Job: "g1"}}}}
	conflict := Answer{Site: "b", Reply: &wire.ReserveReply{Code: wire.CodeConflict, Message: "job g1 already holds a different reservation here"}}
	j := Judge(reqs, []Answer{ok, conflict})
	if j.OK || strings.Join(j.Release, ",") != "a,b" || !strings.Contains(j.Message, "b: conflict") {
		t.Fatalf("one conflict: %+v", j)
	}
}

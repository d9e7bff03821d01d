package agent_test

import (
	"testing"

	"lookahead/wire"
)

// TestRetriedReserveMustFindWhatItAsked (issue 34): a reserve request for
// a job that already holds a reservation here is answered with it only
// when it holds what the request asks; a different reservation of the
// same job (other nodes, other processors, another start or a shorter
// end, another identity) is answered conflict, nothing changed — the
// broker then releases it (broker.Judge) instead of believing in what it
// did not ask for.
func TestRetriedReserveMustFindWhatItAsked(t *testing.T) {
	fx := runSimAgent(t, testConfig("gamma"))
	free, _ := freeAndBusyNodes(t, fx)
	first := reserveReq("g1", t0+600, 600, wire.NodeProcs{Node: free[0], Procs: 4})
	if r := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve, first); r.Code != wire.CodeOK {
		t.Fatalf("reserve: %+v", r)
	}
	if r := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve, first); r.Code != wire.CodeOK || len(r.Reservations) != 1 {
		t.Fatalf("the same request again: %+v, want its reservation", r)
	}
	otherNode, fewer, later, longer, otherUser := first, first, first, first, first
	otherNode.Nodes = []wire.NodeProcs{{Node: free[1], Procs: 4}}
	fewer.Nodes = []wire.NodeProcs{{Node: free[0], Procs: 2}}
	later.Start = t0 + 3600
	longer.Duration = 1200
	otherUser.Identity = wire.Identity{User: "someone", Account: "gridacct"}
	for name, req := range map[string]wire.ReserveRequest{"another node": otherNode, "fewer processors": fewer,
		"another start": later, "a later end": longer, "another user": otherUser} {
		r := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve, req)
		if r.Code != wire.CodeConflict || len(r.Reservations) != 0 {
			t.Errorf("%s: %+v, want conflict", name, r)
		}
	}
	held := request[wire.ListReply](t, fx.nc, "gamma", wire.VerbList, wire.ListRequest{Type: wire.TypeList})
	if len(held.Reservations) != 1 || held.Reservations[0].Nodes[0].Node != free[0] {
		t.Errorf("after the conflicts the site holds %+v, want g1's first reservation only", held.Reservations)
	}
}

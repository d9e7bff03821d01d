package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/wire"
)

// TestFencedByEpoch: a site refuses a reserve, release or stop request
// whose broker epoch is older than the highest it has seen (or that has
// none once one was seen) with fenced, doing nothing; the highest is kept
// in the state file, so a restarted agent still fences. (Dispatch:
// TestInvalidRequestsChangeNoState, on a site that dispatches.)
func TestFencedByEpoch(t *testing.T) {
	cfg := testConfig("gamma")
	cfg.EpochState = filepath.Join(t.TempDir(), "broker-epoch")
	fx := runSimAgent(t, cfg)
	free, _ := freeAndBusyNodes(t, fx)
	old := reserveReq("g1", t0+60, 600, wire.NodeProcs{Node: free[0], Procs: 4})

	// A broker before epochs is served while no epoch was seen.
	if r := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve, old); r.Code != wire.CodeOK {
		t.Fatalf("reserve without an epoch on a fresh site: %+v", r)
	}
	newer := reserveReq("g2", t0+60, 600, wire.NodeProcs{Node: free[1], Procs: 4})
	newer.Epoch = 7
	if r := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve, newer); r.Code != wire.CodeOK {
		t.Fatalf("reserve of epoch 7: %+v", r)
	}
	if data, err := os.ReadFile(cfg.EpochState); err != nil || strings.TrimSpace(string(data)) != "7" {
		t.Fatalf("epoch file: %q, %v; want 7", data, err)
	}
	stale := reserveReq("g3", t0+60, 600, wire.NodeProcs{Node: free[0], Procs: 4})
	stale.Epoch = 6
	calls := fx.res.calls()
	for _, tc := range []struct {
		verb string
		req  any
	}{
		{wire.VerbReserve, stale},
		{wire.VerbReserve, old}, // no epoch, after one was seen
		{wire.VerbRelease, wire.ReleaseRequest{Type: wire.TypeRelease, Job: "g2", Site: "gamma", Epoch: 6}},
		{wire.VerbRelease, wire.ReleaseRequest{Type: wire.TypeRelease, Job: "g2", Site: "gamma"}},
		{wire.VerbStop, wire.StopRequest{Type: wire.TypeStop, Job: "g2", Site: "gamma", Epoch: 6}},
	} {
		var code string
		switch tc.verb {
		case wire.VerbReserve:
			code = request[wire.ReserveReply](t, fx.nc, "gamma", tc.verb, tc.req).Code
		case wire.VerbRelease:
			code = request[wire.ReleaseReply](t, fx.nc, "gamma", tc.verb, tc.req).Code
		case wire.VerbDispatch:
			code = request[wire.DispatchReply](t, fx.nc, "gamma", tc.verb, tc.req).Code
		case wire.VerbStop:
			code = request[wire.StopReply](t, fx.nc, "gamma", tc.verb, tc.req).Code
		}
		if code != wire.CodeFenced {
			t.Errorf("%s %+v: %s, want fenced", tc.verb, tc.req, code)
		}
	}
	if got := fx.res.calls(); got != calls {
		t.Errorf("fenced requests reached the scheduler: %d calls, was %d", got, calls)
	}
	held := request[wire.ListReply](t, fx.nc, "gamma", wire.VerbList, wire.ListRequest{Type: wire.TypeList})
	if len(held.Reservations) != 2 {
		t.Errorf("reservations after fenced requests: %+v, want g1 and g2", held.Reservations)
	}
	// The same epoch and a newer one are served.
	if r := request[wire.ReleaseReply](t, fx.nc, "gamma", wire.VerbRelease, wire.ReleaseRequest{Type: wire.TypeRelease, Job: "g1", Site: "gamma", Epoch: 7}); r.Code != wire.CodeOK {
		t.Errorf("release of epoch 7: %+v", r)
	}

	// A restarted agent reads the highest back.
	fx.stop()
	fx2 := runSimAgent(t, cfg)
	if r := request[wire.ReserveReply](t, fx2.nc, "gamma", wire.VerbReserve, stale); r.Code != wire.CodeFenced {
		t.Errorf("after a restart, reserve of epoch 6: %+v, want fenced", r)
	}
}

// TestEpochFileUnreadable: a corrupt epoch file refuses every changing
// request (internal) rather than forgetting which brokers are fenced.
func TestEpochFileUnreadable(t *testing.T) {
	cfg := testConfig("gamma")
	cfg.EpochState = filepath.Join(t.TempDir(), "broker-epoch")
	if err := os.WriteFile(cfg.EpochState, []byte("seven\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fx := runSimAgent(t, cfg)
	r := request[wire.ReleaseReply](t, fx.nc, "gamma", wire.VerbRelease, wire.ReleaseRequest{Type: wire.TypeRelease, Job: "g1", Site: "gamma", Epoch: 9})
	if r.Code != wire.CodeInternal || !strings.Contains(r.Message, "broker-epoch") {
		t.Fatalf("release with an unreadable epoch file: %+v", r)
	}
}

package agent_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"lookahead/internal/logtest"
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
	beginTerm(t, fx.nc, 7)
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

// TestEpochVerifiedOnTheJobStream: an epoch may raise the site's fence
// only once the job stream shows a broker began that term — it is not
// above the last term record (or the term a copy of it names). A
// well-formed request of an unverifiable epoch (2^64-1, one past the last
// term) is refused invalid, logged and counted, and changes nothing; so
// is every request while the records cannot be read.
func TestEpochVerifiedOnTheJobStream(t *testing.T) {
	var buf logtest.Buffer
	log := zerolog.New(&buf)
	cfg := testConfig("gamma")
	cfg.EpochState = filepath.Join(t.TempDir(), "broker-epoch")
	fx := runSimAgentLog(t, cfg, &log)
	release := func(epoch uint64) wire.ReleaseReply {
		return request[wire.ReleaseReply](t, fx.nc, "gamma", wire.VerbRelease,
			wire.ReleaseRequest{Type: wire.TypeRelease, Job: "g1", Site: "gamma", Epoch: epoch})
	}
	fence := func() string {
		data, _ := os.ReadFile(cfg.EpochState)
		return strings.TrimSpace(string(data))
	}
	if r := release(3); r.Code != wire.CodeInternal || !strings.Contains(r.Message, "lookahead-broker init") {
		t.Fatalf("epoch 3 with no job stream: %+v, want internal naming init", r)
	}
	beginTerm(t, fx.nc, 4)
	for _, e := range []uint64{5, math.MaxUint64} {
		if r := release(e); r.Code != wire.CodeInvalid || !strings.Contains(r.Message, "last term record") {
			t.Errorf("epoch %d above the last term (4): %+v, want invalid", e, r)
		}
	}
	if f := fence(); f != "" {
		t.Fatalf("fence after refused epochs: %q, want none kept", f)
	}
	if r := release(4); r.Code != wire.CodeOK || fence() != "4" {
		t.Fatalf("epoch 4: %+v, fence %q", r, fence())
	}
	// A copy of term 4's record, appended after a snapshot, allows term 4
	// and no later one.
	js := mustJS(t, fx.nc)
	for range 3 {
		if _, err := js.Publish(context.Background(), "lookahead.jobs.filler", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := js.Publish(context.Background(), wire.JobEpochSubject, []byte(`{"type":"epoch.v1","broker":"test","epoch":4}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := release(ack.Sequence); r.Code != wire.CodeInvalid {
		t.Errorf("epoch %d, the sequence of a copy of term 4: %+v, want invalid", ack.Sequence, r)
	}
	if r := release(4); r.Code != wire.CodeOK || fence() != "4" {
		t.Errorf("epoch 4 after the copy: %+v, fence %q", r, fence())
	}
	if n := strings.Count(buf.String(), `"why":"unverified"`); n != 3 {
		t.Errorf("%d log lines of unverified epochs, want 3:\n%s", n, buf.String())
	}
}

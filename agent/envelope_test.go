package agent_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"lookahead/agent"
	"lookahead/wire"
)

// TestInvalidRequestsChangeNoState: a request is validated fully before
// its epoch is admitted, so an invalid one — the poisoning release of
// issue 34 (wrong type, another site, job "x y", epoch 2^64-1) and its
// likes for the other verbs — is answered invalid and leaves the site's
// fence where it was: the active broker's next requests are served, an
// older broker's are still fenced.
func TestInvalidRequestsChangeNoState(t *testing.T) {
	epochFile := filepath.Join(t.TempDir(), "broker-epoch")
	_, _, nc := runDispatchAgentWith(t, func(c *agent.Config) { c.EpochState = epochFile })
	beginTerm(t, nc, 5)
	start := t0 + 600
	first := wire.ReserveRequest{Type: wire.TypeReserve, Job: "g1", Site: "alpha", Start: start, Duration: 1800,
		Nodes: []wire.NodeProcs{{Node: "alpha-n0001", Procs: 4}}, Identity: wire.Identity{User: "alice", Account: "proj1"},
		RequestedBy: "broker", Epoch: 5}
	if r := request[wire.ReserveReply](t, nc, "alpha", wire.VerbReserve, first); r.Code != wire.CodeOK {
		t.Fatalf("reserve of epoch 5: %+v", r)
	}
	poison := uint64(math.MaxUint64)
	badReserve := first
	badReserve.Job, badReserve.Duration, badReserve.Epoch = "g2", -1, poison
	badDispatch := dispatchOf("g1", "alice", "", start) // no script
	badDispatch.Epoch = poison
	for _, tc := range []struct {
		verb string
		req  any
	}{
		{wire.VerbRelease, wire.ReleaseRequest{Type: "release.v9", Job: "x y", Site: "beta", Epoch: poison}},
		{wire.VerbRelease, wire.ReleaseRequest{Type: wire.TypeRelease, Job: "g1", Site: "beta", Epoch: poison}},
		{wire.VerbReserve, badReserve},
		{wire.VerbDispatch, badDispatch},
		{wire.VerbStop, wire.StopRequest{Type: wire.TypeStop, Job: "x y", Site: "alpha", Epoch: poison}},
	} {
		if code := replyCode(t, nc, tc.verb, tc.req); code != wire.CodeInvalid {
			t.Errorf("%s %+v: %s, want invalid", tc.verb, tc.req, code)
		}
		if data, err := os.ReadFile(epochFile); err != nil || strings.TrimSpace(string(data)) != "5" {
			t.Fatalf("after an invalid %s of epoch 2^64-1 the site's epoch is %q (%v), want 5 still", tc.verb, data, err)
		}
	}
	// The active broker (epoch 5) is served; an older one is fenced.
	ok := dispatchOf("g1", "alice", "#lookahead-sim runtime=60\n", start)
	ok.Epoch = 5
	if r := request[wire.DispatchReply](t, nc, "alpha", wire.VerbDispatch, ok); r.Code != wire.CodeOK {
		t.Fatalf("dispatch of epoch 5 after the invalid requests: %+v", r)
	}
	ok.Epoch = 4
	if r := request[wire.DispatchReply](t, nc, "alpha", wire.VerbDispatch, ok); r.Code != wire.CodeFenced {
		t.Errorf("dispatch of epoch 4: %+v, want fenced", r)
	}
	stop := wire.StopRequest{Type: wire.TypeStop, Job: "g1", Site: "alpha", Epoch: 4}
	if code := replyCode(t, nc, wire.VerbStop, stop); code != wire.CodeFenced {
		t.Errorf("stop of epoch 4: %s, want fenced", code)
	}
}

// replyCode sends one request of verb and returns its reply's code.
func replyCode(t *testing.T, nc *nats.Conn, verb string, req any) string {
	t.Helper()
	switch verb {
	case wire.VerbReserve:
		return request[wire.ReserveReply](t, nc, "alpha", verb, req).Code
	case wire.VerbRelease:
		return request[wire.ReleaseReply](t, nc, "alpha", verb, req).Code
	case wire.VerbDispatch:
		return request[wire.DispatchReply](t, nc, "alpha", verb, req).Code
	default:
		return request[wire.StopReply](t, nc, "alpha", verb, req).Code
	}
}

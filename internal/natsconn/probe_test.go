package natsconn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lookahead/internal/natsconn"
)

// TestJudge: each situation gets its own verdict (the leaf node cases are
// also checked on real servers in packaging/nats, leaf_test.go).
func TestJudge(t *testing.T) {
	leaf := natsconn.ServerFacts{Known: true, Name: "leaf-alpha", LeafLinks: 1}
	cut := natsconn.ServerFacts{Known: true, Name: "leaf-alpha"}
	hub := natsconn.ServerFacts{Known: true, Name: "nats1", JetStream: true, Domain: "grid", LeafLinks: 3}
	ownJS := natsconn.ServerFacts{Known: true, Name: "leaf-alpha", JetStream: true, LeafLinks: 1}
	noResp := nats.ErrNoResponders
	for _, tc := range []struct {
		name        string
		r           natsconn.Reach
		ok, unreach bool
		says        string
	}{
		{"direct, unknown server", natsconn.Reach{}, true, false, "JetStream available"},
		{"leaf with domain", natsconn.Reach{Domain: "grid", JSDomain: "grid", Server: leaf}, true, false, "(domain grid)"},
		{"hub without domain", natsconn.Reach{JSDomain: "grid", Server: hub}, false, false, "if it is a grid server"},
		{"leaf's own JetStream", natsconn.Reach{Server: ownJS}, false, false, "runs a JetStream of its own"},
		{"link down", natsconn.Reach{Domain: "grid", JSErr: noResp, Server: cut}, false, true, "link to the grid is down"},
		{"link down, no domain", natsconn.Reach{JSErr: jetstream.ErrJetStreamNotEnabled, Server: cut}, false, true, "set nats.js_domain"},
		{"missing domain", natsconn.Reach{JSErr: jetstream.ErrJetStreamNotEnabled, Server: leaf}, false, false, "nats.js_domain is not set"},
		{"wrong domain", natsconn.Reach{Domain: "hub", JSErr: noResp, Server: leaf}, false, false, `no JetStream of domain "hub"`},
		{"stalled link", natsconn.Reach{Domain: "grid", JSErr: context.DeadlineExceeded, Server: leaf}, false, true, "the link is stalled"},
		{"account without JetStream", natsconn.Reach{JSErr: jetstream.ErrJetStreamNotEnabledForAccount, Server: natsconn.ServerFacts{Known: true, Name: "n", JetStream: true}}, false, false, "does not serve this account"},
		{"unknown server, no domain", natsconn.Reach{JSErr: noResp}, false, false, "JetStream: nats: no responders"},
		{"unknown server, timeout", natsconn.Reach{Domain: "grid", JSErr: context.DeadlineExceeded}, false, true, "context deadline exceeded"},
		{"other error", natsconn.Reach{Domain: "grid", JSErr: errors.New("permissions violation"), Server: leaf}, false, false, "permissions violation"},
	} {
		v := tc.r.Judge()
		if v.OK != tc.ok || v.Unreachable != tc.unreach || !strings.Contains(v.Detail+" "+v.Fix, tc.says) || (!v.OK && v.Fix == "") {
			t.Errorf("%s: %+v, want ok %v, unreachable %v, saying %q (and a fix when failed)", tc.name, v, tc.ok, tc.unreach, tc.says)
		}
	}
}

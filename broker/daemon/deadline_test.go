package daemon

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/wire"
)

// A reserve request carries the instant the broker stops waiting for it,
// so that an agent reached late refuses instead of reserving what the
// broker has already released.
func TestReserveRequestCarriesDeadline(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	nc := connect(t, e.srv)
	got := make(chan wire.ReserveRequest, 4)
	if _, err := nc.Subscribe(wire.AgentSubject("alpha", wire.VerbReserve), func(m *nats.Msg) {
		var r wire.ReserveRequest
		if json.Unmarshal(m.Data, &r) == nil {
			got <- r
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	e.publish("alpha", 1, 4, 8, 1)
	r := e.startBroker(func(c *Config) { c.ReserveTimeout = 7 * time.Second })
	e.waitSites(r.b, 1)
	before := time.Now().Truncate(time.Millisecond) // the wire carries milliseconds
	if rep := submit(t, r.b, "k1", job(4, 3600, 2)); rep.Code != wire.CodeOK {
		t.Fatalf("submit: %+v", rep)
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case req := <-got:
		dl := time.UnixMilli(req.DeadlineMS)
		if dl.Before(before.Add(7*time.Second)) || dl.After(time.Now().Add(7*time.Second)) {
			t.Fatalf("deadline %v, want the request timeout (7 s) after it was sent (%v)", dl, before)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no reserve request seen")
	}
}

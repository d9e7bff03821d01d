package daemon

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/wire"
)

// A reserve request carries how long the broker waits for it, relative
// (timeout_ms, a little less than the broker's own wait, so the site's
// expired answer arrives in time), never an instant of the broker's clock
// that the site would compare with its own.
func TestReserveRequestCarriesRelativeTimeout(t *testing.T) {
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
	if rep := submit(t, r.b, "k1", job(4, 3600, 2)); rep.Code != wire.CodeOK {
		t.Fatalf("submit: %+v", rep)
	}
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case req := <-got:
		if req.DeadlineMS != 0 || req.TimeoutMS != 6300 {
			t.Fatalf("deadline_ms %d, timeout_ms %d: want no absolute deadline and 7 s less a tenth", req.DeadlineMS, req.TimeoutMS)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no reserve request seen")
	}
}

package daemon

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"lookahead/wire"
)

// TestE2EPoisonedRequestsLeaveTheFence: the poisoning message of issue 34
// — a release with an invalid type, another site's name, the job id
// "x y" and epoch 2^64-1 — and well-formed requests of epochs no broker
// holds, sent to a real agent behind the broker's back, are refused and
// leave the site's fence as it was: the broker's next reserve there is
// served and the broker stays active. (On the code before the request
// envelope the first message raised alpha's epoch to 2^64-1; the next
// reserve was answered fenced and the broker stepped down.) The messages
// go over the test's own connection: grid.conf's tests show who may send
// them at all (packaging/nats).
func TestE2EPoisonedRequestsLeaveTheFence(t *testing.T) {
	e := newEnv(t)
	a, _ := e.startAgent("alpha", 4), e.startAgent("beta", 4)
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	epoch := r.b.Epoch()
	for _, p := range []struct {
		verb string
		req  any
	}{
		{wire.VerbRelease, map[string]any{"type": "release.v7", "site": "beta", "job": "x y", "epoch": uint64(math.MaxUint64)}},
		{wire.VerbRelease, wire.ReleaseRequest{Type: wire.TypeRelease, Job: "nothing", Site: "alpha", Epoch: math.MaxUint64}},
		{wire.VerbRelease, wire.ReleaseRequest{Type: wire.TypeRelease, Job: "nothing", Site: "alpha", Epoch: epoch + 1}},
		{wire.VerbStop, wire.StopRequest{Type: wire.TypeStop, Job: "nothing", Site: "alpha", Epoch: math.MaxUint64}},
	} {
		data, _ := json.Marshal(p.req)
		msg, err := e.nc.Request(wire.AgentSubject("alpha", p.verb), data, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var reply struct{ Code, Message string }
		json.Unmarshal(msg.Data, &reply)
		if reply.Code == wire.CodeOK || reply.Code == wire.CodeFenced {
			t.Fatalf("%s %s: answered %s (%s), want a refusal that is not fenced", p.verb, data, reply.Code, reply.Message)
		}
	}
	rep := submit(t, r.b, "k1", job(48, 3600, 2)) // on alpha and beta
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := status(t, r.b, rep.Job); st.State != wire.JobReserved {
		t.Fatalf("k1 after the poisoning messages: %s %s", st.State, st.Message)
	}
	if got := r.b.Epoch(); got != epoch {
		t.Fatalf("broker epoch %d, was %d: it stepped down", got, epoch)
	}
	if held := a.held(t); len(held) != 1 {
		t.Errorf("alpha holds %+v, want k1's reservation", held)
	}
}

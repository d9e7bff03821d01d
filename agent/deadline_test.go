package agent_test

import (
	"strings"
	"testing"
	"time"

	"lookahead/wire"
)

// TestRequestReadAfterItsSendersDeadlineChangesNothing: a reserve request
// that waits unread at the agent (here behind another request held in the
// scheduler, as behind a SIGSTOPped agent) until its sender has stopped
// waiting is answered expired and reserves nothing, though its timeout
// counted from when the agent read it has not run out: the deadline is
// the sender's, from its send time moved to the site's clock by the
// offset the broker measured (wire.Timing). On the code before, the
// timeout counted from the read alone, and the reservation was made.
func TestRequestReadAfterItsSendersDeadlineChangesNothing(t *testing.T) {
	fx := runSimAgent(t, testConfig("gamma"))
	free, _ := freeAndBusyNodes(t, fx)
	held, release := make(chan string, 1), make(chan struct{})
	fx.res.mu.Lock()
	fx.res.hold = func(job string) {
		if job == "g1" {
			held <- job
			<-release
		}
	}
	fx.res.mu.Unlock()
	first := make(chan wire.ReserveReply, 1)
	go func() {
		first <- request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve, reserveReq("g1", t0+60, 600, wire.NodeProcs{Node: free[0], Procs: 4}))
	}()
	<-held
	// Sent now by a broker whose clock is 30 s behind the site's (it
	// measured that offset), waiting 5 s for the answer.
	late := reserveReq("g2", t0+3600, 600, wire.NodeProcs{Node: free[1], Procs: 4})
	late.TimeoutMS, late.SentMS, late.ClockOffsetMS = 5000, fx.clock.Now().UnixMilli()-30_000, 30_000
	second := make(chan wire.ReserveReply, 1)
	go func() { second <- request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve, late) }()
	// The agent is held for two minutes of the site's clock (whenever it
	// reads g2, it reads it after these).
	fx.clock.Add(2 * time.Minute)
	close(release)
	if r := <-first; r.Code != wire.CodeOK {
		t.Fatalf("g1: %+v", r)
	}
	r := <-second
	if r.Code != wire.CodeExpired || !strings.Contains(r.Message, "nothing was done") {
		t.Fatalf("g2, read two minutes after it was sent with a 5 s timeout: %+v, want expired", r)
	}
	list := request[wire.ListReply](t, fx.nc, "gamma", wire.VerbList, wire.ListRequest{Type: wire.TypeList})
	for _, res := range list.Reservations {
		if res.Job == "g2" {
			t.Fatalf("g2 reserved after its sender gave up: %+v", res)
		}
	}
	// The same request read in time is served, whatever the two clocks.
	late.SentMS = fx.clock.Now().UnixMilli() - 30_000
	if r := request[wire.ReserveReply](t, fx.nc, "gamma", wire.VerbReserve, late); r.Code != wire.CodeOK {
		t.Fatalf("g2 read in time on a site 30 s ahead: %+v", r)
	}
}

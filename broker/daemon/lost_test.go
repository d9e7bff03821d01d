package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"lookahead/wire"
)

// reservedOnBeta is a broker with one site, beta, and a job it reserved
// there.
func reservedOnBeta(t *testing.T) (*env, *brokerRun, wire.SubmitReply) {
	t.Helper()
	e := newEnv(t)
	e.startSite("beta")
	e.putForecast("beta", e.siteForecast("beta", 1, 2, 8))
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	g := submit(t, r.b, "k1", job(8, 3600, 2))
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitState(t, r.b, g.Job, wire.JobReserved)
	return e, r, g
}

// Issue 22.1 and 22.6 over NATS: a site's "foreign" event names the
// foreign job in the job's status and leaves it reserved; a "lost" event
// sends the reserved job back to waiting and the next cycle plans it
// again.
func TestSiteReportsForeignJobAndLostReservation(t *testing.T) {
	e, r, g := reservedOnBeta(t)
	send := func(ev wire.JobEvent) {
		data, _ := json.Marshal(ev)
		if err := e.nc.Publish(wire.JobEventSubject("beta", g.Job), data); err != nil {
			t.Fatal(err)
		}
		e.nc.Flush()
	}
	send(wire.JobEvent{Type: wire.TypeJobEvent, Site: "beta", Job: g.Job, State: "foreign", LocalID: "0.vm",
		Message: "foreign job in reservation: local job 0.vm (user alice)"})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(status(t, r.b, g.Job).Message, "foreign job in reservation") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := status(t, r.b, g.Job); s.State != wire.JobReserved || !strings.Contains(s.Message, "beta: foreign job in reservation: local job 0.vm") {
		t.Fatalf("after foreign: %s %q, want reserved with the foreign job named", s.State, s.Message)
	}
	send(wire.JobEvent{Type: wire.TypeJobEvent, Site: "beta", Job: g.Job, State: "lost", Message: "la.k1.0 missing after a Maui restart"})
	waitState(t, r.b, g.Job, wire.JobWaiting)
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitState(t, r.b, g.Job, wire.JobReserved)
	if s := status(t, r.b, g.Job); s.Attempts < 2 {
		t.Fatalf("replanned job: %+v, want a second attempt", s)
	}
}

// Issue 35 (left) over NATS: a site that re-created a job's reservation
// bound to another account sends it as a "rebound" event; once the broker
// took it, the job's status gives the new submit options and says why. A
// rebound event carrying another job's reservation is refused.
func TestSiteReportsReboundReservation(t *testing.T) {
	e, r, g := reservedOnBeta(t)
	was := status(t, r.b, g.Job).Reservations
	if len(was) != 1 {
		t.Fatalf("reservations %+v, want one on beta", was)
	}
	send := func(ev wire.JobEvent) wire.JobEventAck {
		t.Helper()
		data, _ := json.Marshal(ev)
		m, err := e.nc.Request(wire.JobEventSubject("beta", g.Job), data, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var ack wire.JobEventAck
		if err := json.Unmarshal(m.Data, &ack); err != nil {
			t.Fatal(err)
		}
		return ack
	}
	now := was[0]
	now.Site, now.Submit = "", "-A la.acct3 -W x=FLAGS:ADVRES:"+now.ID
	why := "reservation " + now.ID + " re-created, bound to la.acct3 (was la.acct0: the account is taken; parts submitted with -A la.acct0 no longer get in)"
	other := now
	other.Job = "g-other"
	if ack := send(wire.JobEvent{Type: wire.TypeJobEvent, Job: g.Job, State: "rebound", Message: why, Reservations: []wire.Reservation{other}}); ack.Code != wire.CodeInvalid {
		t.Fatalf("a rebound event with another job's reservation: %+v, want refused", ack)
	}
	if ack := send(wire.JobEvent{Type: wire.TypeJobEvent, Job: g.Job, State: "rebound", Message: why, Reservations: []wire.Reservation{now}}); ack.Code != wire.CodeOK {
		t.Fatalf("rebound event: %+v", ack)
	}
	s := status(t, r.b, g.Job)
	if s.State != wire.JobReserved || s.Message != "beta: "+why {
		t.Errorf("after the rebinding: %s %q, want reserved with why", s.State, s.Message)
	}
	if len(s.Reservations) != 1 || s.Reservations[0].Submit != now.Submit || s.Reservations[0].Site != "beta" {
		t.Errorf("reservations %+v, want beta's with %q", s.Reservations, now.Submit)
	}
}

package daemon

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"lookahead/wire"
)

// inFlight reports whether a knock at site waits for its answer.
func (k *knocker) inFlight(site string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.flying[site]
}

// hang makes s a hung agent whose requests are kept unanswered; each one
// that arrives is told on the returned channel.
func (s *testSite) hang() chan string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hung, s.got = true, make(chan string, 64)
	return s.got
}

// wake makes s answer again; the requests it kept are answered as a
// resumed agent answers them (a list, the only read-only one, with its
// reservations; the others are dropped: their sender gave up).
func (s *testSite) wake() {
	s.mu.Lock()
	kept := s.kept
	s.hung, s.kept = false, nil
	s.mu.Unlock()
	for _, req := range kept {
		if strings.HasSuffix(req.Subject(), "."+wire.VerbList) {
			s.list(req)
		}
	}
}

// received drains what a hung site was asked so far.
func received(got chan string) []string {
	var out []string
	for {
		select {
		case v := <-got:
			out = append(out, v)
		default:
			return out
		}
	}
}

// A site whose agent hangs (SIGSTOP: its connection stays up, nothing
// answers) costs the one cycle that finds it out. The next cycle does not
// send it the release it is owed nor wait for it: it knocks (a list
// request in the background) and reserves the job on the other site in
// that same cycle. When the knock is answered the site is back, and the
// next cycle delivers the release.
func TestHungSiteCostsOneCycle(t *testing.T) {
	e := newEnv(t)
	alpha, beta := e.startSite("alpha"), e.startSite("beta")
	got := alpha.hang()
	e.publish("alpha", 1, 4, 8, 1)
	e.publish("beta", 1, 4, 8, 1)
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)
	id := submit(t, r.b, "k1", job(8, 3600, 2)).Job
	cycle := func() {
		t.Helper()
		if err := r.b.Cycle(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // the one cycle: the reserve on alpha waits its timeout
	if st := status(t, r.b, id); st.State != wire.JobWaiting || !slices.Contains(st.Releasing, "alpha") {
		t.Fatalf("after the unanswered commit: %s, releasing %v (%s)", st.State, st.Releasing, st.Message)
	}
	if first := received(got); len(first) == 0 || first[0] != wire.VerbReserve || slices.Contains(first[1:], wire.VerbReserve) ||
		slices.Contains(first, wire.VerbRelease) {
		t.Fatalf("alpha was asked %v in the first cycle, want one reserve (and knocks)", first)
	}
	cycle()
	if st := status(t, r.b, id); st.State != wire.JobReserved || st.Reservations[0].Site != "beta" {
		t.Fatalf("after the second cycle: %s on %v (%s), want reserved on beta", st.State, st.Reservations, st.Message)
	}
	if asked := received(got); slices.Contains(asked, wire.VerbRelease) || slices.Contains(asked, wire.VerbReserve) {
		t.Fatalf("the second cycle sent alpha %v: it waited for a site known not to answer", asked)
	}
	if !siteStatus(t, r.b, "alpha").Excluded {
		t.Fatal("alpha back in planning without answering")
	}
	alpha.wake() // SIGCONT: a knock in flight is answered, or the next one
	cycleUntilAnswers(t, r.b, "alpha")
	cycle()
	if st := status(t, r.b, id); len(st.Releasing) != 0 {
		t.Fatalf("release still owed on %v after alpha answered", st.Releasing)
	}
	if len(beta.held()) != 1 || len(alpha.held()) != 0 {
		t.Fatalf("held: alpha %v beta %v", alpha.held(), beta.held())
	}
}

// The audit record of a request that ran out of time is kept: it used to
// be appended under the request's expired deadline and lost.
func TestAuditOfTimedOutReleaseKept(t *testing.T) {
	e := newEnv(t)
	alpha := e.startSite("alpha")
	e.publish("alpha", 1, 4, 8, 1)
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	id := submit(t, r.b, "k1", job(8, 3600, 2)).Job
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := status(t, r.b, id); st.State != wire.JobReserved {
		t.Fatalf("%s (%s), want reserved", st.State, st.Message)
	}
	if rep := r.b.Cancel(context.Background(), "alice", id); rep.Code != wire.CodeOK {
		t.Fatalf("cancel: %+v", rep)
	}
	got := alpha.hang()
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != wire.VerbRelease {
		t.Fatalf("alpha asked %s, want the owed release", v)
	}
	var rec *wire.AuditRecord
	for _, a := range auditAll(t, e) {
		if a.Action == "release" && a.Job == id && a.Site == "alpha" {
			rec = &a
		}
	}
	if rec == nil || !strings.Contains(rec.Message, "deadline exceeded") {
		t.Fatalf("audit record of the timed-out release: %+v", rec)
	}
}

// knocksEnd: a term's knocks end with it; a knock still waiting when the
// broker stops does not outlive Run.
func TestKnockEndsWithTheTerm(t *testing.T) {
	e := newEnv(t)
	alpha := e.startSite("alpha")
	got := alpha.hang()
	e.publish("alpha", 1, 4, 8, 1)
	r := e.startBroker(func(c *Config) { c.ReserveTimeout = time.Hour })
	e.waitSites(r.b, 1)
	r.b.heard("alpha", "reserve g1", context.DeadlineExceeded)
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != wire.VerbList {
		t.Fatalf("knock %s, want list", v)
	}
	if !r.b.knocks.inFlight("alpha") {
		t.Fatal("no knock in flight at the hung site")
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if r.b.knocks.inFlight("alpha") {
		t.Fatal("a knock outlived the broker's run")
	}
}

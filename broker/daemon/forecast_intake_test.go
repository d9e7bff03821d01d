package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"lookahead/wire"
)

// A site's agent may publish only under its own key and subject (NATS
// permissions), but the forecast body names a site too: alpha publishing a
// forecast that names beta (with more capacity than beta has) must not be
// taken — neither as alpha's (its nodes would be planned as alpha's under
// beta's name) nor as beta's. Alpha is excluded and says why; beta keeps
// its own forecast, and a job too big for beta is not planned.
func TestAttackForecastNamingAnotherSite(t *testing.T) {
	e := newEnv(t)
	e.startSite("alpha")
	beta := e.startSite("beta")
	e.putForecast("alpha", e.siteForecast("alpha", 1, 1, 8))
	e.putForecast("beta", e.siteForecast("beta", 1, 1, 8))
	r := e.startBroker(nil)
	e.waitSites(r.b, 2)

	forged := e.siteForecast("beta", 2, 4, 8) // beta00..beta03, 32 processors
	e.putForecast("alpha", forged)
	st := waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return s.Excluded })
	if !strings.Contains(st.Problem, `names site "beta"`) {
		t.Fatalf("alpha excluded for %q, want the site name named", st.Problem)
	}
	if b := siteStatus(t, r.b, "beta"); b.Seq != 1 || b.Excluded {
		t.Fatalf("beta's own forecast was replaced or excluded: %+v", b)
	}
	if n := r.b.badForecasts.Load(); n != 1 {
		t.Fatalf("%d forecasts refused, want 1", n)
	}
	rep := submit(t, r.b, "k1", job(16, 3600, 2)) // 16 processors: only the forged forecast has them
	if err := r.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := status(t, r.b, rep.Job); s.State == wire.JobReserved || len(beta.held()) != 0 {
		t.Fatalf("a job was planned on the forged forecast: %+v, beta holds %v", s, beta.held())
	}
}

// missRevision makes the broker hold site's forecast as revision 0 with no
// digest, as if it had missed the revision stored in the bucket.
func missRevision(b *Broker, site string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := *b.sites[site]
	s.Forecast.Seq = 0
	b.sites[site] = &s
	delete(b.digests, site)
}

func heartbeatOf(t *testing.T, e *env, site string, seq uint64) []byte {
	t.Helper()
	data, err := json.Marshal(wire.Heartbeat{Type: wire.TypeHeartbeat, Site: site, Seq: seq, Generated: e.clock.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A heartbeat naming a revision the broker does not hold makes it read the
// site's key again, however many such heartbeats arrive.
func TestHeartbeatOfAnotherRevisionRereads(t *testing.T) {
	e := newEnv(t)
	e.putForecast("alpha", e.siteForecast("alpha", 1, 1, 8))
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	missRevision(r.b, "alpha")
	hb := heartbeatOf(t, e, "alpha", 1)
	for range 50 {
		if err := e.nc.Publish(wire.ForecastSubject("alpha"), hb); err != nil {
			t.Fatal(err)
		}
	}
	waitSite(t, r.b, "alpha", func(s wire.SiteStatus) bool { return s.Seq == 1 && s.Problem == "" })
}

// The re-reading belongs to the running broker: a heartbeat handled after
// it stopped reads nothing (it used to start a goroutine of its own, with
// no deadline but the reserve timeout, that took the forecast into a
// stopped broker).
func TestNoRereadAfterStop(t *testing.T) {
	e := newEnv(t)
	e.putForecast("alpha", e.siteForecast("alpha", 1, 1, 8))
	r := e.startBroker(nil)
	e.waitSites(r.b, 1)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	missRevision(r.b, "alpha")
	r.b.heartbeat("alpha", heartbeatOf(t, e, "alpha", 1))
	// A reread takes milliseconds on the embedded server: give one every
	// chance to happen before checking none did.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s := siteStatus(t, r.b, "alpha"); s.Seq != 0 {
			t.Fatalf("a stopped broker re-read alpha's key: %+v", s)
		}
	}
}

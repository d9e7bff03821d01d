package daemon

import (
	"context"
	"strings"
	"testing"

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

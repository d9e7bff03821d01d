package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"lookahead/broker/web"
	"lookahead/wire"
)

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := readJSON(url, v); err != nil {
		t.Fatal(err)
	}
}

// readJSON decodes the answer to GET url into v (safe off the test's
// goroutine).
func readJSON(url string, v any) error {
	r, err := http.Get(url)
	if err != nil {
		return err
	}
	defer r.Body.Close()
	if r.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s", url, r.Status)
	}
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

// TestAPIAgainstABroker reads the API (no browser) of a broker with two
// simulated sites: the queue with why a job waits, a job's history from
// the job stream, the audit stream's records per origin, and the
// Gantt's reservations.
func TestAPIAgainstABroker(t *testing.T) {
	g := newGrid(t)
	g.startAgent("alpha", 2)
	g.startAgent("beta", 2)
	g.startBroker()
	g.waitSites(2)
	ok := g.submit("r-ok", 24, 3600, 5)
	no := g.submit("r-no", 8, 3600, 0.01) // no slot is that cheap: waits, no fit
	if err := g.b.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var jobs struct{ Jobs []web.JobView }
	getJSON(t, g.url+"api/jobs", &jobs)
	if len(jobs.Jobs) != 2 || jobs.Jobs[0].ID != ok || jobs.Jobs[0].State != wire.JobReserved || len(jobs.Jobs[0].Sites) != 2 ||
		jobs.Jobs[1].ID != no || !strings.HasPrefix(jobs.Jobs[1].Why, "no-fit") {
		t.Fatalf("jobs %+v", jobs.Jobs)
	}
	var ev struct {
		Events []struct{ Kind string }
		Error  string
	}
	// The history is read without a consumer on the job stream, however
	// often the page asks.
	nc := g.connect()
	spy, err := nc.SubscribeSync("$JS.API.CONSUMER.>")
	if err != nil || nc.Flush() != nil {
		t.Fatal(err)
	}
	for range 3 {
		getJSON(t, g.url+"api/jobs/"+ok+"/events", &ev)
	}
	nc.Flush()
	if n, _, _ := spy.Pending(); n != 0 {
		m, _ := spy.NextMsg(0)
		t.Errorf("3 histories made %d consumer requests, the first on %s", n, m.Subject)
	}
	var kinds []string
	for _, e := range ev.Events {
		kinds = append(kinds, e.Kind)
	}
	if strings.Join(kinds, ",") != "submitted,intent,outcome" || ev.Error != "" {
		t.Errorf("history of %s: %v %q", ok, kinds, ev.Error)
	}
	var audit web.AuditView
	getJSON(t, g.url+"api/audit", &audit)
	if len(audit.Origins["broker"]) == 0 || len(audit.Origins["alpha"]) == 0 || len(audit.Origins["beta"]) == 0 {
		t.Errorf("audit origins %v", audit.Origins)
	}
	for _, r := range audit.Origins["alpha"] {
		if r.Origin != "alpha" {
			t.Errorf("alpha's record of origin %q", r.Origin)
		}
	}
	// The local queue, as alpha's agent reports it (no local work: known
	// and empty).
	var lq web.LocalQueue
	getJSON(t, g.url+"api/sites/alpha/queue", &lq)
	if !lq.Known || lq.Total != 0 || lq.Error != "" || lq.Revision == 0 {
		t.Errorf("alpha's local queue %+v", lq)
	}
	var gantt web.Gantt
	getJSON(t, g.url+"api/gantt?site=alpha&rows=50", &gantt)
	bars := 0
	for _, r := range gantt.Rows {
		for _, b := range r.Bars {
			if b.Job == ok && b.State == wire.JobReserved {
				bars += b.Procs
			}
		}
	}
	if len(gantt.Rows) != 2 || bars == 0 {
		t.Errorf("alpha gantt: %d rows, %d reserved procs of %s", len(gantt.Rows), bars, ok)
	}
}

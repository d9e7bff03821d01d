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
// simulated sites: the queue with why a job waits (the why `lookahead
// status JOB` gives: what was short, what would help), a job's history from
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
		jobs.Jobs[1].ID != no {
		t.Fatalf("jobs %+v", jobs.Jobs)
	}
	st := g.b.Status(wire.StatusRequest{Job: no})
	if len(st.Jobs) != 1 || st.Jobs[0].Plan == nil || jobs.Jobs[1].Why != st.Jobs[0].Plan.Why {
		t.Errorf("the page's why of %s:\n%q\nwant status's: %s", no, jobs.Jobs[1].Why, statusWhy(st))
	}
	for _, want := range []string{"at max_price 0.01 at most 0 of its 8 processors", "what would help: max_price"} {
		if !strings.Contains(jobs.Jobs[1].Why, want) {
			t.Errorf("the page's why of %s: %q lacks %q", no, jobs.Jobs[1].Why, want)
		}
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

// statusWhy is the why of the one job of a status reply, or what the
// reply holds instead.
func statusWhy(st wire.StatusReply) string {
	if len(st.Jobs) != 1 || st.Jobs[0].Plan == nil {
		return fmt.Sprintf("%d jobs, code %s %s", len(st.Jobs), st.Code, st.Message)
	}
	return fmt.Sprintf("%q", st.Jobs[0].Plan.Why)
}

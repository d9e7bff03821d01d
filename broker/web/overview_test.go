package web

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"lookahead/wire"
)

// standbyBroker is a standby that knows broker b1 holds the lease.
type standbyBroker struct{ fakeBroker }

func (standbyBroker) HAStatus() wire.HAStatus {
	return wire.HAStatus{Name: "b2", Role: wire.RoleStandby, Message: "standby: broker b1 is active (epoch 7)",
		Leader: &wire.Leadership{Broker: "b1", Epoch: 7, Since: 50}}
}

func overview(t *testing.T, b Broker) Overview {
	t.Helper()
	s, err := New(Config{Listen: "127.0.0.1:9466", Version: "v9"}, b, Streams{})
	if err != nil {
		t.Fatal(err)
	}
	w := serve(t, s, "GET", "/api/overview", nil)
	var o Overview
	if err := json.Unmarshal(w.Body.Bytes(), &o); err != nil {
		t.Fatalf("%s: %v", w.Body, err)
	}
	return o
}

// TestOverviewSaysTheRole: the header's broker is the role the broker
// has: the active one with its epoch, or a standby naming the active one.
func TestOverviewSaysTheRole(t *testing.T) {
	a := overview(t, fakeBroker{}).Broker
	if !a.Active || a.Role != wire.RoleActive || a.Name != "b1" || a.Leader == nil || a.Leader.Epoch != 7 || a.Version != "v9" {
		t.Errorf("active: %+v", a)
	}
	s := overview(t, standbyBroker{}).Broker
	if s.Active || s.Role != wire.RoleStandby || s.Name != "b2" || s.Leader == nil || s.Leader.Broker != "b1" || s.Why == "" {
		t.Errorf("standby: %+v", s)
	}
}

// TestOverviewSiteQuery: a bad sort or state is a 400 naming it; the
// counts and names are of every site whatever the filter.
func TestOverviewSiteQuery(t *testing.T) {
	s, err := New(Config{Listen: "127.0.0.1:9466"}, fakeBroker{}, Streams{})
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"sort=size": `sort "size"`, "state=fresh,gone": `state "gone"`} {
		if w := serve(t, s, "GET", "/api/overview?"+q, nil); w.Code != 400 || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s: %d %s", q, w.Code, w.Body)
		}
	}
	w := serve(t, s, "GET", "/api/overview?state=stale&match=a", nil)
	var o Overview
	if err := json.Unmarshal(w.Body.Bytes(), &o); err != nil || len(o.Sites) != 0 || o.Total != 1 || o.Counts["fresh"] != 1 || len(o.Names) != 1 {
		t.Errorf("filtered overview %s (%v)", w.Body, err)
	}
}

// TestLocalQueue: a site's local queue as its agent reports it, asked
// when the page asks; an agent that does not answer is said; an older
// agent's status (no queue) is not taken for an empty queue.
func TestLocalQueue(t *testing.T) {
	s, err := New(Config{Listen: "127.0.0.1:9466"}, fakeBroker{}, Streams{})
	if err != nil {
		t.Fatal(err)
	}
	var q LocalQueue
	w := serve(t, s, "GET", "/api/sites/a/queue", nil)
	if err := json.Unmarshal(w.Body.Bytes(), &q); err != nil || !q.Known || q.Total != 12 || q.Revision != 3 || len(q.Jobs) != 1 ||
		q.Jobs[0].Job != "7.a" || q.Jobs[0].Start != 400 || q.Error != "" {
		t.Errorf("queue of a: %s (%v)", w.Body, err)
	}
	w = serve(t, s, "GET", "/api/sites/b/queue", nil)
	if err := json.Unmarshal(w.Body.Bytes(), &q); err != nil || !strings.Contains(q.Error, "no responders") || q.Jobs == nil {
		t.Errorf("queue of b: %s (%v)", w.Body, err)
	}
	if w := serve(t, s, "GET", "/api/sites/a%20b/queue", nil); w.Code != 400 {
		t.Errorf("bad site: %d", w.Code)
	}
	if q, err := ParseLocalQueue("old", []byte(`{"site":"old","revision":9}`)); err != nil || q.Known || q.Total != 0 || q.Jobs == nil {
		t.Errorf("older agent: %+v %v", q, err)
	}
	if _, err := ParseLocalQueue("bad", []byte(`{`)); err == nil {
		t.Error("a broken status taken")
	}
}

// partsBroker's sites say yes, no and nothing of running parts.
type partsBroker struct{ fakeBroker }

func (partsBroker) Sites() wire.SitesReply {
	yes, no := true, false
	return wire.SitesReply{Now: 100, TTL: 300, Sites: []wire.SiteStatus{
		{Site: "a", RunsParts: &yes}, {Site: "b", RunsParts: &no}, {Site: "c"}}}
}

// TestOverviewSaysWhetherASiteRunsParts: each site of the Sites tab
// says whether its agent runs grid jobs' parts, as `lookahead sites`
// PARTS does (yes, no, ? not said), and the tab has the column.
func TestOverviewSaysWhetherASiteRunsParts(t *testing.T) {
	got := map[string]string{}
	for _, s := range overview(t, partsBroker{}).Sites {
		got[s.Site] = s.Parts
	}
	if want := map[string]string{"a": "yes", "b": "no", "c": "?"}; !maps.Equal(got, want) {
		t.Errorf("parts %v, want %v", got, want)
	}
	s, err := New(Config{Listen: "127.0.0.1:9466"}, partsBroker{}, Streams{})
	if err != nil {
		t.Fatal(err)
	}
	page, js := serve(t, s, "GET", "/", nil).Body.String(), serve(t, s, "GET", "/app.js", nil).Body.String()
	if !strings.Contains(page, ">runs parts</th>") || !strings.Contains(js, `td(s.parts, "parts")`) {
		t.Errorf("the Sites table has no runs-parts column drawn from the overview's parts")
	}
}

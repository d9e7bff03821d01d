package web

import (
	"encoding/json"
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

package client

import (
	"reflect"
	"strings"
	"testing"

	"lookahead/wire"
)

func names(sites []wire.SiteStatus) string {
	var out []string
	for _, s := range sites {
		out = append(out, s.Site)
	}
	return strings.Join(out, ",")
}

// TestSelectSites: each sort, the state and name filters, and the one
// state rule (silent before excluded before offline before stale).
func TestSelectSites(t *testing.T) {
	sites := []wire.SiteStatus{
		{Site: "c2-west", LastSeen: 90, Age: 10, Nodes: 5, Procs: 40, FreeProcHours: 10, ClockOffset: -30},
		{Site: "a1", LastSeen: 50, Age: 50, Nodes: 50, Procs: 400, FreeProcHours: 3, Stale: true},
		{Site: "b-silent", LastSeen: 95, Age: 5, Nodes: 2, Procs: 16, Stale: true, Excluded: true, Unanswered: "does not answer"},
		{Site: "d-refused", Stale: true, Excluded: true, Problem: "refused"},
		{Site: "C2-east", LastSeen: 99, Age: 1, Nodes: 5, Procs: 80, FreeProcHours: 99, ClockOffset: 40},
		{Site: "e-stopped", LastSeen: 80, Age: 20, Stale: true, Offline: true},
	}
	states := map[string]string{}
	for _, s := range sites {
		states[s.Site] = SiteState(s)
	}
	if want := map[string]string{"c2-west": "fresh", "a1": "stale", "b-silent": "silent", "d-refused": "excluded", "C2-east": "fresh", "e-stopped": "offline"}; !reflect.DeepEqual(states, want) {
		t.Errorf("states %v", states)
	}
	for _, c := range []struct {
		q    SiteQuery
		want string
	}{
		{SiteQuery{}, "C2-east,a1,b-silent,c2-west,d-refused,e-stopped"},
		{SiteQuery{Sort: "state"}, "b-silent,d-refused,e-stopped,a1,C2-east,c2-west"},
		{SiteQuery{Sort: "heard"}, "d-refused,a1,e-stopped,c2-west,b-silent,C2-east"},
		{SiteQuery{Sort: "free"}, "C2-east,c2-west,a1,b-silent,d-refused,e-stopped"},
		{SiteQuery{Sort: "nodes"}, "a1,C2-east,c2-west,b-silent,d-refused,e-stopped"},
		{SiteQuery{Sort: "procs"}, "a1,C2-east,c2-west,b-silent,d-refused,e-stopped"},
		{SiteQuery{Sort: "clock"}, "C2-east,c2-west,a1,b-silent,d-refused,e-stopped"},
		{SiteQuery{Match: "c2"}, "C2-east,c2-west"},
		{SiteQuery{States: []string{SiteSilent, SiteExcluded, SiteOffline, SiteStale}, Sort: "state"}, "b-silent,d-refused,e-stopped,a1"},
		{SiteQuery{States: []string{SiteFresh}, Match: "WEST"}, "c2-west"},
	} {
		if got := names(SelectSites(sites, c.q)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.q, got, c.want)
		}
	}
	if names(sites) != "c2-west,a1,b-silent,d-refused,C2-east,e-stopped" {
		t.Errorf("SelectSites changed its input: %s", names(sites))
	}
	if c := CountSites(sites); c[SiteFresh] != 2 || c[SiteSilent] != 1 || c[SiteOffline] != 1 {
		t.Errorf("counts %v", c)
	}
}

// TestSiteQueryCheck names the setting and the choices.
func TestSiteQueryCheck(t *testing.T) {
	for q, want := range map[*SiteQuery]string{
		{Sort: "size"}:                        `--sort "size": want one of name, state`,
		{States: []string{"fresh", "broken"}}: `--state "broken": want states among silent, excluded`,
	} {
		if err := q.Check("--sort", "--state"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", *q, err, want)
		}
	}
	if err := (SiteQuery{Sort: "state", States: SiteStates}).Check("--sort", "--state"); err != nil {
		t.Error(err)
	}
}

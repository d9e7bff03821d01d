package maui

import (
	"context"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
)

// liveNow is the clock of a live capture (its NOW.txt).
func liveNow(t *testing.T, dir string) time.Time {
	t.Helper()
	b, err := os.ReadFile("testdata/" + dir + "/NOW.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(s, 0)
}

// TestReserveReplaysLiveSession replays testdata/live-reserve, recorded by
// TestLiveMauiReservations on the live Torque 6.1.3 + Maui 3.3.1 site:
// the same steps must send exactly the recorded argument vectors (the
// binding ACL included) and reach the same answers.
func TestReserveReplaysLiveSession(t *testing.T) {
	now := liveNow(t, "live-reserve")
	r := &recorder{r: mustFixture(t, "testdata/live-reserve")}
	c := NewClient(r, ClientConfig{Capacity: map[string]int{"vm": 8}, Location: time.UTC, Now: func() time.Time { return now }})
	got := liveReserveSteps(t, c, r, "vm", 8, now)
	want := Reservation{Job: "maui-g1", IDs: []string{"la.maui-g1.0"}, Start: now.Unix() + 300, End: now.Unix() + 900,
		Hosts: []forecast.HostProcs{{Node: "vm", Procs: 4}}, User: "alice", Account: "proj1", Bind: "la.acct0",
		Qsub: []string{"-A", "la.acct0", "-W", "x=FLAGS:ADVRES:la.maui-g1.0"}}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("got %+v\nwant %+v", got[0], want)
	}
	if got[1].Bind != "la.acct1" {
		t.Errorf("second binding %q, want la.acct1 (la.acct0 is in use)", got[1].Bind)
	}
	if n := len(r.ran("setres")); n != 3 {
		t.Errorf("%d setres calls, want 3 (two grid jobs, one admin)", n)
	}
}

func TestParseBindingACL(t *testing.T) {
	ds, err := ParseDiagnoseRes(strings.NewReader(string(readFixture(t, "live-reserve/19_diagnose.out"))))
	if err != nil || len(ds) != 3 {
		t.Fatalf("%+v %v", ds, err)
	}
	want := []ACLEntry{{"RES", "la.maui-g1", "="}, {"USER", "alice", "+*"}, {"ACCT", "proj1", "+"},
		{"ACCT", "la.acct0", "+*"}, {"ACCT", "la.acct0", "+"}}
	if !reflect.DeepEqual(ds[0].ACL, want) {
		t.Errorf("ACL %+v", ds[0].ACL)
	}
	u, g, a, b := aclIdentity(ds[0])
	if u != "alice" || g != "" || a != "proj1" || b != "la.acct0" {
		t.Errorf("identity %q %q %q bind %q", u, g, a, b)
	}
	if u, _, a, b := aclIdentity(ds[2]); u != "root" || a != "" || b != "" {
		t.Errorf("admin identity %q %q %q", u, a, b)
	}
}

// TestHoldsListsOwnAndForeign reads the live state with two grid jobs'
// reservations and an admin's.
func TestHoldsListsOwnAndForeign(t *testing.T) {
	now := liveNow(t, "live-reserve")
	r := scenario(t, []step{
		{"showres", "live-reserve/17_showres", 0},
		{"showres -n", "live-reserve/18_showres", 0},
		{"diagnose -r", "live-reserve/19_diagnose", 0},
	})
	c := NewClient(r, ClientConfig{Location: time.UTC, Now: func() time.Time { return now }})
	got, err := c.Holds(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	start := now.Unix() + 300
	vm4 := []forecast.HostProcs{{Node: "vm", Procs: 4}}
	want := []Hold{
		{Reservation: forecast.Reservation{ID: "la.maui-g1.0", Job: "maui-g1", Start: start, End: start + 600, Hosts: vm4}, User: "alice", Bind: "la.acct0"},
		{Reservation: forecast.Reservation{ID: "la.maui-g2.0", Job: "maui-g2", Start: start, End: start + 600, Hosts: vm4}, User: "alice", Bind: "la.acct1"},
		{Reservation: forecast.Reservation{ID: "maui-admin.0", Start: start + 3600, End: start + 4200, Hosts: vm4}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestRunningPartNotCountedTwice: on the live site job 27 (alice, -A
// la.acct0) runs inside la.maui-b1.0; both hold 4 of vm's 8 processors,
// with la.maui-b2.0 the node is exactly full, not 12 of 8.
func TestRunningPartNotCountedTwice(t *testing.T) {
	r := scenario(t, []step{
		{"showres", "live-bind/20_showres", 0},
		{"showres -n", "live-bind/13_showres", 0},
		{"diagnose -r", "live-bind/14_diagnose", 0},
	})
	clock := time.Date(2026, 11, 24, 18, 52, 8, 0, time.UTC)
	c := NewClient(r, ClientConfig{Location: time.UTC, Now: func() time.Time { return clock }, Capacity: map[string]int{"vm": 8}})
	st, err := c.state(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hs := c.holdings(st)
	if peak := peakProcs(hs, clock.Unix(), clock.Unix()+60); peak != 8 {
		t.Errorf("peak %d held on vm, want 8: %+v", peak, hs)
	}
	// An idle job's plan (24) is not a hold; the free node after the
	// reservations end is reservable.
	req := ReserveRequest{Job: "x", Start: clock.Unix() + 300, End: clock.Unix() + 400, User: "alice",
		Hosts: []forecast.HostProcs{{Node: "vm", Procs: 8}}}
	if err := c.checkOverlap(st, req); err != nil {
		t.Errorf("free node refused: %v", err)
	}
}

func TestQsubArgs(t *testing.T) {
	cases := []struct {
		r    Reservation
		want string
	}{
		{Reservation{IDs: []string{"la.g1.0"}, Account: "proj1", Bind: "la.acct0"}, "-A la.acct0 -W x=FLAGS:ADVRES:la.g1.0"},
		{Reservation{IDs: []string{"la.g1.0", "la.g1.1"}, Group: "grid", Bind: "la.acct2"}, "-A la.acct2 -W group_list=grid"},
		{Reservation{IDs: []string{"la.g1.0"}, Group: "grid", Bind: "la.acct2"}, "-A la.acct2 -W group_list=grid,x=FLAGS:ADVRES:la.g1.0"},
		{Reservation{IDs: []string{"gridres1.0"}, Account: "gridacct", Group: "grid"}, "-A gridacct -W x=FLAGS:ADVRES:gridres1.0"},
		{Reservation{IDs: []string{"a.0", "a.1"}}, ""},
	}
	for _, tc := range cases {
		if got := strings.Join(QsubArgs(tc.r), " "); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}

func TestPickBindSkipsAccountsInUse(t *testing.T) {
	c := NewClient(nil, ClientConfig{})
	st := &resState{diag: map[string]ResDiag{
		"la.g1.0": {ACL: []ACLEntry{{"ACCT", "la.acct0", "+*"}}},
		"27":      {CL: []ACLEntry{{"ACCT", "la.acct2", ""}}},
	}}
	if got := c.pickBind(st.bindsInUse([]string{"la.acct1", "proj1"})); got != "la.acct3" {
		t.Errorf("bind %q, want la.acct3", got)
	}
	if !c.IsBindAccount("la.acct12") || c.IsBindAccount("la.acct") || c.IsBindAccount("proj1") {
		t.Error("IsBindAccount")
	}
}

// Standing reservations (SRCFG) are holds too, marked: a simulation that
// copies the site's SRCFG makes its own. Captured from a real Maui 3.3.1
// with SRCFG[sr1] PERIOD=DAY DEPTH=2 HOSTLIST=n01,n02 TASKCOUNT=2
// USERLIST=bob (testdata/standing).
func TestHoldsMarksStandingReservations(t *testing.T) {
	clock := time.Date(2026, 11, 24, 19, 12, 9, 0, time.UTC)
	c := NewClient(mustFixture(t, "testdata/standing"), ClientConfig{Location: time.UTC, Now: func() time.Time { return clock }})
	got, err := c.Holds(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	two := []forecast.HostProcs{{Node: "n01", Procs: 2}, {Node: "n02", Procs: 2}}
	want := []Hold{
		{Reservation: forecast.Reservation{ID: "sr1.0.0", Start: clock.Unix(), End: clock.Unix() + 4*3600 + 47*60 + 51, Hosts: two, Standing: true}},
		{Reservation: forecast.Reservation{ID: "sr1.1.0", Start: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC).Unix(),
			End: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC).Unix(), Hosts: two, Standing: true}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

package agent

import (
	"context"
	"testing"
	"time"

	"lookahead/maui"
	"lookahead/wire"
)

// Issue 22.6, captured live (testdata/maui/live-restart: showres, showres
// -n and diagnose -r right after `schedctl -k` and a new start of Maui
// 3.3.1): both grid reservations the agent had made came back with
// "USER==alice++*". Against what the agent made, both are to repair as
// altered; one the agent made that Maui no longer lists is missing; one
// that ended is dropped.
func TestCheckHeldAfterMauiRestart(t *testing.T) {
	r, err := maui.NewFixtureRunner("testdata/maui/live-restart")
	if err != nil {
		t.Fatal(err)
	}
	// 15:02:09 UTC on the capture host, a few seconds after the restart.
	now := time.Date(2026, 11, 25, 15, 2, 9, 0, time.UTC)
	res := MauiReserver{Runner: r, Config: maui.ClientConfig{Location: time.UTC, Now: func() time.Time { return now }}}
	listed, err := res.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 25, 15, 5, 18, 0, time.UTC).Unix()
	made := func(job, bind string, dur int64) heldEntry {
		return heldEntry{Spec: ReserveSpec{Job: job, Start: start, End: start + dur},
			Reservations: []wire.Reservation{{ID: "la." + job + ".0", Job: job, Site: "vm", Start: start, End: start + dur,
				Nodes: []wire.NodeProcs{{Node: "vm", Procs: 4}}, Identity: wire.Identity{User: "alice", Account: "proj1"},
				Submit: "-A " + bind + " -W x=FLAGS:ADVRES:la." + job + ".0 -N la." + job + ".0"}}}
	}
	l := heldLedger{Version: heldLedgerVersion, Jobs: map[string]heldEntry{
		"r1": made("r1", "la.acct0", 600), "r2": made("r2", "la.acct1", 480),
		"gone": made("gone", "la.acct2", 600), "old": {Spec: ReserveSpec{Job: "old", End: now.Unix() - 1}}}}
	repair, expired := checkHeld(l, listed, now.Unix(), heldTol)
	if len(expired) != 1 || expired[0] != "old" {
		t.Fatalf("expired %v, want [old]", expired)
	}
	want := []struct{ job, why string }{{"gone", HeldMissing}, {"r1", HeldAltered}, {"r2", HeldAltered}}
	if len(repair) != len(want) {
		t.Fatalf("repairs %+v, want %v", repair, want)
	}
	for i, w := range want {
		if repair[i].Job != w.job || repair[i].Why != w.why {
			t.Errorf("repair %d: %s %s (%s), want %s %s", i, repair[i].Job, repair[i].Why, repair[i].Detail, w.job, w.why)
		}
	}
}

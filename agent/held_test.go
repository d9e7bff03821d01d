package agent

import (
	"context"
	"os"
	"strconv"
	"strings"
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

// Captured live (testdata/maui/live-restart-refused): one grid-style
// reservation (setres -u alice* -a proj1,la.acct9*,la.acct9) before and
// after a clean Maui restart, which lists it with "USER==alice++*". That
// restored ACL is not the one made even though its names differ only by
// Maui's '+': a part submitted as alice with -A la.acct9 and ADVRES on it
// stayed idle ("rejected : ReserveTime", 10_checkjob_v) and started once
// the reservation was made again (16_qstat_f). So the agent re-creates
// it, and the repair says why.
func TestRestoredACLIsAltered(t *testing.T) {
	const dir = "testdata/maui/live-restart-refused"
	r, err := maui.NewFixtureRunner(dir)
	if err != nil {
		t.Fatal(err)
	}
	nows := readNows(t, dir+"/NOW.txt") // before the restart, after it
	var now int64
	res := MauiReserver{Runner: r, Config: maui.ClientConfig{Location: time.UTC, Now: func() time.Time { return time.Unix(now, 0) }}}
	list := func(at int64) []wire.Reservation {
		now = at
		listed, err := res.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return listed
	}
	made := list(nows[0])
	if len(made) != 1 || made[0].Job != "aclp" || made[0].Identity.User != "alice" {
		t.Fatalf("before the restart Maui lists %+v, want aclp of alice", made)
	}
	l := heldLedger{Version: heldLedgerVersion, Jobs: map[string]heldEntry{
		"aclp": {Spec: ReserveSpec{Job: "aclp", Start: made[0].Start, End: made[0].End, Bind: BindOf(made[0].Submit)}, Reservations: made}}}
	if repair, _ := checkHeld(l, made, nows[0], heldTol); len(repair) != 0 {
		t.Fatalf("as made: repairs %+v, want none", repair)
	}
	repair, _ := checkHeld(l, list(nows[1]), nows[1], heldTol)
	if len(repair) != 1 || repair[0].Why != HeldAltered {
		t.Fatalf("after the restart: repairs %+v, want aclp altered (the restored ACL admits no job of alice)", repair)
	}
	want := "ACL user=alice+ account=proj1, made user=alice account=proj1 (restored by a Maui restart, which gives a required name back with a '+': it admits no job of alice)"
	if repair[0].Detail != want {
		t.Errorf("detail %q, want %q", repair[0].Detail, want)
	}
}

// readNows reads a capture's clock, one Unix time a line.
func readNows(t *testing.T, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, n)
	}
	return out
}

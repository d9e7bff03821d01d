package maui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"lookahead/forecast"
)

// step is one captured answer a scenario serves: when the client runs argv,
// it gets what the real command in src printed (testdata path without
// .out/.err) with src's exit code.
type step struct {
	argv string
	src  string
	exit int
}

// scenario builds a FixtureRunner directory from real captures, keyed by
// the argument vectors the client sends.
func scenario(t *testing.T, steps []step) Runner {
	t.Helper()
	dir := t.TempDir()
	var index strings.Builder
	for i, s := range steps {
		name := fmt.Sprintf("s%02d", i)
		for _, ext := range []string{".out", ".err"} {
			b, err := os.ReadFile(filepath.Join("testdata", s.src+ext))
			if err != nil {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, name+ext), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Fprintf(&index, "%s\t%d\t%s\n", name, s.exit, s.argv)
	}
	if err := os.WriteFile(filepath.Join(dir, "INDEX.tsv"), []byte(index.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := NewFixtureRunner(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{r: r}
}

// recorder keeps every command a Runner was asked to run.
type recorder struct {
	r     Runner
	mu    sync.Mutex
	calls []string
}

func (c *recorder) Run(ctx context.Context, name string, args ...string) (Result, error) {
	c.mu.Lock()
	c.calls = append(c.calls, strings.Join(append([]string{name}, args...), " "))
	c.mu.Unlock()
	return c.r.Run(ctx, name, args...)
}

func (c *recorder) ran(prefix string) []string {
	var out []string
	for _, call := range c.calls {
		if strings.HasPrefix(call, prefix) {
			out = append(out, call)
		}
	}
	return out
}

var sim2Now = time.Date(2026, 11, 22, 3, 3, 0, 0, time.UTC)

// sim2Client reads the captures' reservation names as lookahead's: the
// captured names carry no prefix, so the prefix is cleared (NewClient
// never allows that).
func sim2Client(r Runner, capacity map[string]int) *Client {
	c := NewClient(r, ClientConfig{Location: time.UTC, Now: func() time.Time { return sim2Now }, Capacity: capacity})
	c.cfg.Prefix = ""
	return c
}

var (
	sim2State = []step{
		{"showres", "sim2-setres/03_showres", 0},
		{"showres -n", "sim2-setres/04_showres_n", 0},
		{"diagnose -r", "sim2-setres/13_diagnose_r", 0},
	}
	sim1State = []step{
		{"showres", "sim1-iter011/showres", 0},
		{"showres -n", "sim1-iter011/showres_n", 0},
		{"diagnose -r", "sim1-iter011/diagnose_r", 0},
	}
	gridres1Req = ReserveRequest{Job: "gridres1", Start: sim2Now.Unix(), End: sim2Now.Unix() + 3600,
		Hosts: []forecast.HostProcs{{Node: "n01", Procs: 2}}, User: "griduser", Group: "grid", Account: "gridacct"}
	gridres1Res = Reservation{Job: "gridres1", IDs: []string{"gridres1.0"}, Start: sim2Now.Unix(), End: sim2Now.Unix() + 3600,
		Hosts: []forecast.HostProcs{{Node: "n01", Procs: 2}}, User: "griduser", Group: "grid", Account: "gridacct",
		Qsub: []string{"-A", "gridacct", "-W", "x=FLAGS:ADVRES:gridres1.0"}}
)

func TestReserveRetryIsNoOp(t *testing.T) {
	r := scenario(t, sim2State)
	got, err := sim2Client(r, nil).Reserve(context.Background(), gridres1Req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, gridres1Res) {
		t.Fatalf("got %+v", got)
	}
	if calls := r.(*recorder).ran("setres"); len(calls) != 0 {
		t.Errorf("retry ran setres: %v", calls)
	}
}

func TestReserveConflict(t *testing.T) {
	req := gridres1Req
	req.Hosts = []forecast.HostProcs{{Node: "n02", Procs: 2}}
	_, err := sim2Client(scenario(t, sim2State), nil).Reserve(context.Background(), req)
	if ref, ok := AsRefusal(err); !ok || ref.Code != CodeConflict {
		t.Fatalf("err %v, want conflict", err)
	}
}

func TestReserveRefusesOverlapMauiWouldAccept(t *testing.T) {
	// sim1 at iteration 11: j05 runs on n01 (1 of 2 procs) for 5 more
	// minutes. Maui would accept a 2-proc host reservation on n01.
	capacity := map[string]int{"n01": 2, "n02": 2, "n03": 2, "n04": 2, "n05": 2, "n06": 2, "n07": 2, "n08": 2}
	r := scenario(t, sim1State)
	c := sim2Client(r, capacity)
	c.cfg.Now = func() time.Time { return time.Date(2026, 11, 22, 3, 12, 24, 0, time.UTC) }
	req := gridres1Req
	req.Start, req.End = time.Date(2026, 11, 22, 3, 13, 0, 0, time.UTC).Unix(), time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC).Unix()
	_, err := c.Reserve(context.Background(), req)
	if ref, ok := AsRefusal(err); !ok || ref.Code != CodeOverlap {
		t.Fatalf("err %v, want overlap", err)
	}
	// After j05's end (03:17:24) the node is free: no refusal from the check.
	req.Start = time.Date(2026, 11, 22, 3, 18, 0, 0, time.UTC).Unix()
	st, err := c.state(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.checkOverlap(st, req); err != nil {
		t.Fatalf("free node refused: %v", err)
	}
	if calls := r.(*recorder).ran("setres"); len(calls) != 0 {
		t.Errorf("ran setres: %v", calls)
	}
}

func TestReserveRollsBackOnPartialFailure(t *testing.T) {
	steps := append(append([]step{}, sim1State...),
		step{"setres -u griduser* -a gridacct,acct0*,acct0 -n grid1 -s 03:03:00_11/22/2026 -d 00:10:00 -r PROCS=4 ^(vm)$", "phaseB/01_setres_grid1", 0},
		step{"setres -u griduser* -a gridacct,acct0*,acct0 -n grid1 -s 03:03:00_11/22/2026 -d 00:10:00 -r PROCS=2 ^(n01)$", "sim2-setres/02_setres_gridres2", 1},
		step{"releaseres grid1.0", "phaseB/22_releaseres_grid1", 0})
	r := scenario(t, steps)
	req := ReserveRequest{Job: "grid1", Start: sim2Now.Unix(), End: sim2Now.Unix() + 600, User: "griduser", Account: "gridacct",
		Hosts: []forecast.HostProcs{{Node: "n01", Procs: 2}, {Node: "vm", Procs: 4}}}
	_, err := sim2Client(r, nil).Reserve(context.Background(), req)
	if ref, ok := AsRefusal(err); !ok || ref.Code != CodeNoResources {
		t.Fatalf("err %v, want no_resources", err)
	}
	if rel := r.(*recorder).ran("releaseres"); !reflect.DeepEqual(rel, []string{"releaseres grid1.0"}) {
		t.Fatalf("rollback calls %v", rel)
	}
}

func TestReserveRollsBackWhenShowresDisagrees(t *testing.T) {
	steps := append(append([]step{}, sim1State...),
		step{"setres -u griduser* -a gridacct,acct0*,acct0 -n grid1 -s 03:03:00_11/22/2026 -d 00:10:00 -r PROCS=4 ^(vm)$", "phaseB/01_setres_grid1", 0},
		step{"showres", "sim1-iter011/showres", 0},
		step{"releaseres grid1.0", "phaseB/22_releaseres_grid1", 0})
	r := scenario(t, steps)
	req := ReserveRequest{Job: "grid1", Start: sim2Now.Unix(), End: sim2Now.Unix() + 600, User: "griduser", Account: "gridacct",
		Hosts: []forecast.HostProcs{{Node: "vm", Procs: 4}}}
	_, err := sim2Client(r, nil).Reserve(context.Background(), req)
	if ref, ok := AsRefusal(err); !ok || ref.Code != CodeVerifyFailed {
		t.Fatalf("err %v, want verify_failed", err)
	}
	if rel := r.(*recorder).ran("releaseres"); len(rel) != 1 {
		t.Fatalf("rollback calls %v", rel)
	}
}

// never fails the test when called: validation must refuse before any
// command runs.
type never struct{ t *testing.T }

func (n never) Run(_ context.Context, name string, args ...string) (Result, error) {
	n.t.Errorf("ran %s %v", name, args)
	return Result{}, fmt.Errorf("must not run")
}

func TestReserveValidationRunsNothing(t *testing.T) {
	c := sim2Client(never{t}, map[string]int{"n01": 2, "n02": 2})
	ok := gridres1Req
	cases := map[string]struct {
		mod  func(*ReserveRequest)
		code Code
	}{
		"shell job":   {func(r *ReserveRequest) { r.Job = "g1;rm -rf /" }, CodeBadIdentity},
		"option user": {func(r *ReserveRequest) { r.User = "-x" }, CodeBadIdentity},
		"space group": {func(r *ReserveRequest) { r.Group = "a b" }, CodeBadIdentity},
		"dollar acct": {func(r *ReserveRequest) { r.Account = "$(id)" }, CodeBadIdentity},
		"no identity": {func(r *ReserveRequest) { r.User, r.Group, r.Account = "", "", "" }, CodeBadIdentity},
		"regex node":  {func(r *ReserveRequest) { r.Hosts = []forecast.HostProcs{{Node: "n0[1-2]", Procs: 1}} }, CodeBadIdentity},
		"end<=start":  {func(r *ReserveRequest) { r.End = r.Start }, CodeBadTime},
		"past":        {func(r *ReserveRequest) { r.Start, r.End = r.Start-7200, r.Start-3600 }, CodeBadTime},
		"past start":  {func(r *ReserveRequest) { r.Start -= 3600 }, CodeBadTime},
		"no hosts":    {func(r *ReserveRequest) { r.Hosts = nil }, CodeBadCount},
		"zero procs":  {func(r *ReserveRequest) { r.Hosts = []forecast.HostProcs{{Node: "n01", Procs: 0}} }, CodeBadCount},
		"node twice": {func(r *ReserveRequest) {
			r.Hosts = []forecast.HostProcs{{Node: "n01", Procs: 1}, {Node: "N01", Procs: 1}}
		}, CodeBadCount},
		"over capacity": {func(r *ReserveRequest) { r.Hosts = []forecast.HostProcs{{Node: "n01", Procs: 3}} }, CodeBadCount},
		"unknown node":  {func(r *ReserveRequest) { r.Hosts = []forecast.HostProcs{{Node: "n09", Procs: 1}} }, CodeUnknownNode},
	}
	for name, tc := range cases {
		req := ok
		tc.mod(&req)
		_, err := c.Reserve(context.Background(), req)
		if ref, isRef := AsRefusal(err); !isRef || ref.Code != tc.code {
			t.Errorf("%s: err %v, want %s", name, err, tc.code)
		}
	}
	if _, err := c.Release(context.Background(), "a b"); err == nil {
		t.Error("release of a bad job id accepted")
	}
}

func TestListGroupsByJob(t *testing.T) {
	r := scenario(t, []step{
		{"showres", "sim2-setres/33_showres_after", 0},
		{"showres -n", "sim2-setres/34_showres_n_after", 0},
		{"diagnose -r", "sim2-setres/35_diagnose_r_after", 0},
	})
	got, err := sim2Client(r, nil).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	by := map[string]Reservation{}
	for _, g := range got {
		jobs = append(jobs, g.Job)
		by[g.Job] = g
	}
	want := []string{"abstime", "allres", "baduser", "flagged", "gridres1", "gridres2", "gridres3", "griduser", "overlap1", "taskge", "withdesc"}
	if !reflect.DeepEqual(jobs, want) {
		t.Fatalf("jobs %v", jobs)
	}
	g := by["gridres1"]
	if !reflect.DeepEqual(g.IDs, []string{"gridres1.0", "gridres1.1"}) ||
		!reflect.DeepEqual(g.Hosts, []forecast.HostProcs{{Node: "n01", Procs: 2}, {Node: "n08", Procs: 2}}) ||
		g.Start != sim2Now.Unix() || g.End != sim2Now.Unix()+6*3600 || !reflect.DeepEqual(g.Qsub, []string{"-A", "gridacct"}) {
		t.Errorf("gridres1 = %+v", g)
	}
	if w := by["withdesc"]; !reflect.DeepEqual(w.Hosts, []forecast.HostProcs{{Node: "n07", Procs: 2}, {Node: "n08", Procs: 2}}) {
		t.Errorf("withdesc = %+v", w)
	}
	if a := by["abstime"]; a.Start != time.Date(2026, 11, 22, 10, 0, 40, 0, time.UTC).Unix() || a.End-a.Start != 3600 {
		t.Errorf("abstime = %+v", a)
	}
	if len(by["allres"].Hosts) != 8 {
		t.Errorf("allres = %+v", by["allres"])
	}
}

// Release leaves a reservation named like a grid job's whose ACL carries
// no binding account (overlap1.0, made by hand with -u someone: an
// admin's) and says so; releasing what does not exist is a success;
// releaseres' ERROR line is what counts. Issue 22.4: audit --repair
// released an admin's la.-named reservation for bob.
func TestReleaseIdempotent(t *testing.T) {
	r := scenario(t, []step{
		{"showres", "sim2-setres/33_showres_after", 0},
		{"showres -n", "sim2-setres/34_showres_n_after", 0},
		{"diagnose -r", "sim2-setres/35_diagnose_r_after", 0},
		{"releaseres overlap1.0", "sim2-setres/40_releaseres_overlap1", 0},
		{"releaseres nosuchres.0", "sim2-setres/41_releaseres_err_unknown", 0},
	})
	c := sim2Client(r, nil)
	got, err := c.Release(context.Background(), "overlap1")
	if err != nil || !reflect.DeepEqual(got, ReleaseResult{Job: "overlap1", NotOurs: []string{"overlap1.0"}}) {
		t.Fatalf("release overlap1: %+v %v, want it left alone (no binding account)", got, err)
	}
	got, err = c.Release(context.Background(), "neverreserved")
	if err != nil || len(got.Released)+len(got.Missing)+len(got.NotOurs) != 0 {
		t.Fatalf("release of nothing: %+v %v", got, err)
	}
	got, err = c.releaseIDs(context.Background(), []string{"overlap1.0"})
	if err != nil || !reflect.DeepEqual(got.Released, []string{"overlap1.0"}) {
		t.Fatalf("releaseres overlap1.0: %+v %v", got, err)
	}
	// releaseres exits 0 on an unknown id: the ERROR line is what counts.
	got, err = c.releaseIDs(context.Background(), []string{"nosuchres.0"})
	if err != nil || !reflect.DeepEqual(got.Missing, []string{"nosuchres.0"}) || len(got.Released) != 0 {
		t.Fatalf("release unknown: %+v %v", got, err)
	}
}

func TestPlanAndArgs(t *testing.T) {
	calls := plan([]forecast.HostProcs{{Node: "b", Procs: 2}, {Node: "a", Procs: 2}, {Node: "c.x", Procs: 8}})
	if len(calls) != 2 || calls[0].procs != 8 || !reflect.DeepEqual(calls[1].nodes, []string{"a", "b"}) {
		t.Fatalf("plan %+v", calls)
	}
	if p := nodePattern([]string{"c.x", "n01"}); p != `^(c\.x|n01)$` {
		t.Errorf("pattern %q", p)
	}
	c := NewClient(nil, ClientConfig{Relative: true, Now: func() time.Time { return time.Unix(1000, 0) }})
	args := c.setresArgs(ReserveRequest{Job: "g17", Start: 4600, End: 4600 + 7200, Account: "acct"}, "la.acct3", calls[0])
	want := []string{"-a", "acct,la.acct3*,la.acct3", "-n", "la.g17", "-s", "+01:00:00", "-d", "02:00:00", "-r", "PROCS=8", `^(c\.x)$`}
	if !reflect.DeepEqual(args, want) {
		t.Errorf("args %q", args)
	}
	if job, ok := c.JobOf("la.g.17.3"); !ok || job != "g.17" {
		t.Errorf("JobOf = %q %v", job, ok)
	}
	for _, id := range []string{"la.g17", "other.0", "la..0", "la.g17.x"} {
		if j, ok := c.JobOf(id); ok && id != "la..0" {
			t.Errorf("JobOf(%q) = %q", id, j)
		}
	}
	many := make([]forecast.HostProcs, 300)
	for i := range many {
		many[i] = forecast.HostProcs{Node: fmt.Sprintf("node%04d", i), Procs: 1}
	}
	for _, call := range plan(many) {
		if len(nodePattern(call.nodes)) > maxPattern+16 {
			t.Errorf("pattern of %d nodes too long", len(call.nodes))
		}
	}
}

// TestReserveReplaysRealSession replays a session recorded against the
// real Maui 3.3.1 (testdata/real-reserve, made by TestRealMauiReservations
// with LOOKAHEAD_MAUI_CAPTURE): the argument vectors must be exactly what
// the client sends, and the answers are Maui's own.
func TestReserveReplaysRealSession(t *testing.T) {
	r := &recorder{r: mustFixture(t, "testdata/real-reserve")}
	now := liveNow(t, "real-reserve")
	capacity := map[string]int{}
	for i := 1; i <= 8; i++ {
		capacity[fmt.Sprintf("n%02d", i)] = 2
	}
	c := NewClient(r, ClientConfig{Relative: true, Location: time.UTC, Capacity: capacity, Now: func() time.Time { return now }})
	start := now.Unix() + 1800
	req := ReserveRequest{Job: "g17", Start: start, End: start + 3600, User: "griduser", Group: "grid", Account: "gridacct",
		Hosts: []forecast.HostProcs{{Node: "n02", Procs: 2}, {Node: "n03", Procs: 1}, {Node: "n04", Procs: 1}}}
	got, err := c.Reserve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := Reservation{Job: "g17", IDs: []string{"la.g17.0", "la.g17.1"}, Start: start, End: start + 3600,
		Hosts: req.Hosts, User: "griduser", Group: "grid", Account: "gridacct", Bind: "la.acct0",
		Qsub: []string{"-A", "la.acct0", "-W", "group_list=grid"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if again, err := c.Reserve(context.Background(), req); err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("retry %+v %v", again, err)
	}
	over := req
	over.Job, over.Hosts = "g18", []forecast.HostProcs{{Node: "n01", Procs: 1}}
	if _, err := c.Reserve(context.Background(), over); err == nil {
		t.Fatal("overlap with the running job on n01 accepted")
	}
	if n := len(r.ran("setres")); n != 2 {
		t.Errorf("%d setres calls, want 2", n)
	}
}

// TestReserveReleasesWhatSetresReported: setres answered with a
// reservation that is not the job's (Maui named it after something else);
// it was created all the same and must be released, not leaked.
func TestReserveReleasesWhatSetresReported(t *testing.T) {
	steps := append(append([]step{}, sim1State...),
		step{"setres -u griduser* -a gridacct,acct0*,acct0 -n grid9 -s 03:03:00_11/22/2026 -d 00:10:00 -r PROCS=4 ^(vm)$", "phaseB/01_setres_grid1", 0},
		step{"releaseres grid1.0", "phaseB/22_releaseres_grid1", 0})
	r := scenario(t, steps)
	req := ReserveRequest{Job: "grid9", Start: sim2Now.Unix(), End: sim2Now.Unix() + 600, User: "griduser", Account: "gridacct",
		Hosts: []forecast.HostProcs{{Node: "vm", Procs: 4}}}
	_, err := sim2Client(r, nil).Reserve(context.Background(), req)
	if ref, ok := AsRefusal(err); !ok || ref.Code != CodeVerifyFailed {
		t.Fatalf("err %v, want verify_failed", err)
	}
	if rel := r.(*recorder).ran("releaseres"); !reflect.DeepEqual(rel, []string{"releaseres grid1.0"}) {
		t.Fatalf("rollback calls %v, want releaseres grid1.0", rel)
	}
}

// TestReserveRollbackFindsUnreportedReservation: setres could not be
// run to the end (here: no answer at all); whatever showres then lists
// under the job's name was made by this call and is released.
func TestReserveRollbackFindsUnreportedReservation(t *testing.T) {
	steps := append(append([]step{}, sim1State...),
		step{"showres", "sim2-setres/03_showres", 0},
		step{"releaseres gridres1.0", "sim2-setres/40_releaseres_overlap1", 0})
	r := scenario(t, steps)
	_, err := sim2Client(r, nil).Reserve(context.Background(), gridres1Req)
	if err == nil {
		t.Fatal("reserve without a setres answer succeeded")
	}
	if rel := r.(*recorder).ran("releaseres"); !reflect.DeepEqual(rel, []string{"releaseres gridres1.0"}) {
		t.Fatalf("rollback calls %v, want releaseres gridres1.0", rel)
	}
}

package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/slurm"
	"lookahead/slurm/slurmtest"
	"lookahead/torque"
	"lookahead/wire"
)

func slurmSite(t *testing.T, c *slurmtest.Cluster) *agent.SlurmSite {
	t.Helper()
	cl := slurm.NewExecClient(slurm.ExecConfig{Conf: c.Conf, Timeout: 30 * time.Second, Loc: time.Local})
	return &agent.SlurmSite{Client: cl, Site: "sl", Prefix: "la."}
}

// Against a real private Slurm: a grid reservation for the second user
// (read back, idempotent, closed to root), a part submitted into it as
// that user that starts inside it on its cores and reports its exit
// status, release with a pending part, and a reservation changed by hand
// as the audit sees it.
func TestLiveSlurmSiteReservesDispatchesReleases(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	site := slurmSite(t, c)
	ctx := context.Background()

	snap, err := site.Snapshot(ctx)
	if err != nil || len(snap.Nodes) != 1 || !snap.Nodes[0].Usable() || snap.Nodes[0].Procs != 8 {
		t.Fatalf("snapshot = %+v, %v", snap, err)
	}
	start := time.Now().Add(8 * time.Second).Unix()
	spec := agent.ReserveSpec{Job: "g1", Start: start, End: start + 600, Nodes: []wire.NodeProcs{{Node: c.Node, Procs: 4}},
		Identity: wire.Identity{User: slurmtest.User2}}
	res, err := site.Reserve(ctx, spec)
	if err != nil || len(res.Reservations) != 1 {
		t.Fatalf("reserve: %+v, %v", res, err)
	}
	t.Logf("reserve ran %q", res.Commands)
	if strings.Contains(strings.Join(res.Commands[0], " "), "flags=") {
		t.Errorf("a grid reservation was made with flags: %q", res.Commands[0])
	}
	if again, err := site.Reserve(ctx, spec); err != nil || agent.SlurmDiff(spec, again.Reservations[0]) != "" {
		t.Fatalf("retried reserve: %+v, %v", again, err)
	}
	// Overlapping cores are refused by slurmctld, as a scheduler refusal.
	over := agent.ReserveSpec{Job: "g9", Start: start + 60, End: start + 120, Nodes: []wire.NodeProcs{{Node: c.Node, Procs: 8}},
		Identity: wire.Identity{User: slurmtest.User2}}
	if _, err := site.Reserve(ctx, over); !errors.Is(err, agent.ErrScheduler) || !strings.Contains(err.Error(), "nodes_busy") {
		t.Errorf("overlapping reservation: %v", err)
	}
	if r := c.Run("sbatch", "-o", "/dev/null", "-n", "1", "--reservation=la.g1", "--wrap", "true"); r.ExitCode == 0 ||
		!strings.Contains(r.Stderr, "Access denied") {
		t.Errorf("root entered the grid reservation: %+v", r)
	}
	held, err := site.Holds(ctx)
	if err != nil || len(held) != 1 || held[0].Reservation.Job != "g1" || held[0].User != slurmtest.User2 {
		t.Fatalf("holds = %+v, %v", held, err)
	}

	out := filepath.Join(c.OutDir(), "la.g1.0.out")
	q := torque.QsubSpec{User: slurmtest.User2, UID: c.User2UID(), Name: "la.g1.0", Walltime: 590, Bind: []string{"--reservation=la.g1", "--job-name=la.g1.0"},
		Nodes: []forecast.HostProcs{{Node: c.Node, Procs: 4}}, Output: out, Error: filepath.Join(c.OutDir(), "la.g1.0.err"),
		Env:    []torque.EnvVar{{Name: "LOOKAHEAD_JOB", Value: "g1"}},
		Script: []byte("#!/bin/sh\necho job=$LOOKAHEAD_JOB user=$(id -un)\nsleep 2\nexit 3\n")}
	id, argv, err := site.Submit(ctx, q)
	if err != nil {
		t.Fatalf("submit %q: %v", argv, err)
	}
	t.Logf("submitted %s: %q", id, argv)
	cpuIDs := waitCPUIDs(t, c, id)
	b := waitDone(t, site, id)
	resv := listed(t, site, "la.g1")
	t.Logf("part %s started %d s after the reservation's start (ran on cores %s; reservation cores %+v)", id, b.Started-start, cpuIDs, resv.Nodes)
	if b.Started < start || b.Started >= start+600 || b.ExitStatus == nil || *b.ExitStatus != 3 || b.User != slurmtest.User2 {
		t.Errorf("part = %+v (exit %v)", b, b.ExitStatus)
	}
	if text, _ := os.ReadFile(out); string(text) != "job=g1 user="+slurmtest.User2+"\n" {
		t.Errorf("part output %q", text)
	}
	if rc := resvCoreIDs(t, c, "la.g1"); rc != "" && rc != cpuIDs {
		t.Errorf("part ran on cores %s, the reservation holds %s", cpuIDs, rc)
	}

	// Release with a part pending in a future reservation.
	later := time.Now().Add(time.Hour).Unix()
	if _, err := site.Reserve(ctx, agent.ReserveSpec{Job: "g2", Start: later, End: later + 600,
		Nodes: []wire.NodeProcs{{Node: c.Node, Procs: 2}}, Identity: wire.Identity{User: slurmtest.User2}}); err != nil {
		t.Fatalf("%v\n%s", err, c.Run("scontrol", "show", "reservation").Stdout)
	}
	q2 := q
	q2.Name, q2.Bind, q2.Nodes = "la.g2.0", []string{"--reservation=la.g2"}, []forecast.HostProcs{{Node: c.Node, Procs: 2}}
	pid, _, err := site.Submit(ctx, q2)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := site.Release(ctx, "g2")
	if err != nil || len(rel.IDs) != 1 || rel.IDs[0] != "la.g2" {
		t.Fatalf("release: %+v, %v", rel, err)
	}
	t.Logf("release ran %q", rel.Commands)
	if b := jobOf(t, site, pid); b.State != "C" || b.ExitStatus != nil {
		t.Errorf("pending part after release: %+v", b)
	}
	if again, err := site.Release(ctx, "g2"); err != nil || len(again.IDs) != 0 {
		t.Errorf("second release: %+v, %v", again, err)
	}

	// Changed by hand: the listing (what the audit compares) shows it.
	if r := c.Run("scontrol", "update", "reservationname=la.g1", "users=root"); r.ExitCode != 0 {
		t.Fatalf("update: %+v", r)
	}
	if got := listed(t, site, "la.g1"); got.Identity.User != "root" || agent.SlurmDiff(spec, got) == "" {
		t.Errorf("hand-changed reservation listed as %+v", got)
	}
}

func listed(t *testing.T, site *agent.SlurmSite, id string) wire.Reservation {
	t.Helper()
	r, rs, err := findListed(site, id)
	if err != nil {
		t.Fatal(err)
	}
	if r == nil {
		t.Fatalf("%s not listed: %+v", id, rs)
	}
	return *r
}

// findListed is reservation id as the site lists it now, nil when it is
// not listed (e.g. while the agent re-creates it), with the whole list.
func findListed(site *agent.SlurmSite, id string) (*wire.Reservation, []wire.Reservation, error) {
	rs, err := site.List(context.Background())
	if err != nil {
		return nil, nil, err
	}
	for i := range rs {
		if rs[i].ID == id {
			return &rs[i], rs, nil
		}
	}
	return nil, rs, nil
}

func jobOf(t *testing.T, site *agent.SlurmSite, id string) torque.BatchJob {
	t.Helper()
	jobs, _, err := site.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("job %s not listed", id)
	return torque.BatchJob{}
}

func waitDone(t *testing.T, site *agent.SlurmSite, id string) torque.BatchJob {
	t.Helper()
	for range 600 {
		if b := jobOf(t, site, id); b.Done() {
			return b
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job %s did not end within 60 s", id)
	return torque.BatchJob{}
}

var cpuIDsRE = regexp.MustCompile(`CPU_IDs=(\S+)`)

// waitCPUIDs waits for the job to run and returns the cores it holds
// (scontrol show job -d).
func waitCPUIDs(t *testing.T, c *slurmtest.Cluster, id string) string {
	t.Helper()
	for range 600 {
		r := c.Run("scontrol", "show", "job", "-d", id)
		if m := cpuIDsRE.FindStringSubmatch(r.Stdout); m != nil {
			return m[1]
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job %s did not run within 60 s", id)
	return ""
}

var coreIDsRE = regexp.MustCompile(`CoreIDs=(\S+)`)

func resvCoreIDs(t *testing.T, c *slurmtest.Cluster, name string) string {
	t.Helper()
	r := c.Run("scontrol", "show", "reservation", name)
	if m := coreIDsRE.FindStringSubmatch(r.Stdout); m != nil {
		return m[1]
	}
	t.Logf("reservation %s lists no CoreIDs", name)
	return ""
}

// The built-in engine under the cluster's own slurm.conf against
// backfill's planned starts (squeue --json start_time, what squeue
// --start prints) on a real slurmctld: coverage and error are logged (they
// depend on when backfill ran); every start Slurm planned must be
// predicted.
func TestLiveSlurmForecastAgainstBackfill(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	site := slurmSite(t, c)
	for _, j := range []struct{ n, minutes int }{{6, 10}, {4, 5}, {8, 20}, {2, 3}, {3, 15}, {1, 60}, {5, 7}} {
		if r := c.RunAsUser2("sbatch", "-o", "/dev/null", "-n", strconv.Itoa(j.n), "-t", strconv.Itoa(j.minutes), "--wrap", "sleep 3600"); r.ExitCode != 0 {
			t.Fatalf("sbatch: %+v", r)
		}
	}
	ctx := context.Background()
	var sn slurm.Snapshot
	waited := time.Now()
	for {
		var err error
		if sn, err = site.Client.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
		if cov, _ := compareStarts(sn.Jobs, nil); cov.Planned >= pending(sn.Jobs) || time.Since(waited) > 40*time.Second {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	pol, err := agent.LoadSlurmPolicy(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	snap := agent.WithHolds(slurm.ForecastSnapshot(sn, "sl", now), agent.SlurmHolds(sn.Reservations, nil, "la.", now.Unix()))
	_, preds, err := agent.BuiltinEngine{Horizon: 24 * time.Hour, Policy: pol.Policy, Pricing: forecast.DefaultPricing()}.Forecast(ctx, snap, now)
	if err != nil {
		t.Fatal(err)
	}
	cov, errs := compareStarts(sn.Jobs, preds)
	var sum int64
	for _, e := range errs {
		sum += max(e, -e)
	}
	mean := int64(0)
	if len(errs) > 0 {
		mean = sum / int64(len(errs))
	}
	t.Logf("live: %d pending, backfill planned %d (after %v), the forecast predicts %d of them; errors predicted-planned %v s, mean |error| %d s",
		pending(sn.Jobs), cov.Planned, time.Since(waited).Round(time.Second), cov.Predicted, errs, mean)
	at := map[string]int64{}
	for _, p := range preds {
		at[p.Job] = p.Start - now.Unix()
	}
	for _, j := range sn.Jobs {
		planned := int64(-1)
		if j.Start != nil {
			planned = j.Start.Unix() - now.Unix()
		}
		t.Logf("job %d %s %d cores limit %v priority %d: slurm %d s, forecast %d s", j.ID, j.State, j.CPUs, j.TimeLimit, j.Priority, planned, at[strconv.FormatInt(j.ID, 10)])
	}
	if cov.Predicted != cov.Planned {
		t.Errorf("coverage %+v", cov)
	}
}

func pending(jobs []slurm.Job) int {
	n := 0
	for _, j := range jobs {
		if j.State == "PENDING" {
			n++
		}
	}
	return n
}

// A slurmctld restart (saved state kept) and our reservations: the grid
// reservations list the same before and after (the future one made while
// the other is active shows no CoreIDs before the restart and CoreIDs
// after: the listing, from CoreCnt, must not change), and a part queued in
// one stays queued in it.
func TestLiveSlurmRestartKeepsGridReservations(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	site := slurmSite(t, c)
	ctx := context.Background()
	now := time.Now().Unix()
	for _, s := range []agent.ReserveSpec{
		{Job: "soon", Start: now + 2, End: now + 1200, Nodes: []wire.NodeProcs{{Node: c.Node, Procs: 4}}},
		{Job: "later", Start: now + 7200, End: now + 9000, Nodes: []wire.NodeProcs{{Node: c.Node, Procs: 6}}},
	} {
		s.Identity.User = slurmtest.User2
		if _, err := site.Reserve(ctx, s); err != nil {
			t.Fatalf("%v\n%s", err, c.Run("scontrol", "show", "reservation").Stdout)
		}
	}
	q := torque.QsubSpec{User: slurmtest.User2, UID: c.User2UID(), Name: "la.later.0", Walltime: 1700, Bind: []string{"--reservation=la.later"},
		Nodes: []forecast.HostProcs{{Node: c.Node, Procs: 6}}, Output: "/dev/null", Error: "/dev/null", Script: []byte("#!/bin/sh\ntrue\n")}
	id, _, err := site.Submit(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	before, err := site.List(ctx)
	if err != nil || len(before) != 2 {
		t.Fatalf("before: %+v, %v", before, err)
	}
	t.Logf("CoreIDs of la.later before the restart: %q", resvCoreIDs(t, c, "la.later"))
	c.RestartController()
	after, err := site.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CoreIDs of la.later after the restart: %q", resvCoreIDs(t, c, "la.later"))
	if !reflect.DeepEqual(before, after) {
		t.Errorf("grid reservations changed across the restart:\nbefore %+v\nafter  %+v", before, after)
	}
	if b := jobOf(t, site, id); b.State != "Q" || b.Reservation != "la.later" {
		t.Errorf("the queued part after the restart: %+v", b)
	}
}

// A slurmctld restarted without its saved state (the state directory
// lost) loses our grid reservations; the agent, restarted too, reads the reservations it made
// from its hold-state file and makes them again at its first poll, on the
// same cores and times.
func TestLiveSlurmStateLossRepairedByTheAgent(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	site := slurmSite(t, c)
	site.Site = "sl"
	nc := startNATS(t)
	cfg := agent.Config{Site: "sl", Debounce: 50 * time.Millisecond, Refresh: time.Second, HoldState: filepath.Join(t.TempDir(), "holds.json"),
		Dispatch: agent.DispatchConfig{Users: map[string]string{"alice": slurmtest.User2}}}
	run := func() (stop func()) {
		a, err := agent.New(cfg, agent.Deps{Conn: nc, Snapshotter: site, Reserver: site,
			Engine: agent.BuiltinEngine{Horizon: 6 * time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		waitService(t, nc, "sl")
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("agent: %v", err)
			}
		}
	}
	stop := run()
	start := time.Now().Add(time.Hour).Unix()
	r := request[wire.ReserveReply](t, nc, "sl", wire.VerbReserve, wire.ReserveRequest{Type: wire.TypeReserve, Job: "lost1", Site: "sl",
		Start: start, Duration: 1800, Nodes: []wire.NodeProcs{{Node: c.Node, Procs: 4}}, Identity: wire.Identity{User: "alice"}, RequestedBy: "broker"})
	if r.Code != wire.CodeOK {
		t.Fatalf("reserve: %+v", r)
	}
	before := listed(t, site, "la.lost1")
	stop()
	c.RestartControllerDiscardingState()
	if rs, err := site.List(context.Background()); err != nil || len(rs) != 0 {
		t.Fatalf("after the state loss: %+v, %v", rs, err)
	}
	defer run()()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if rs, _ := site.List(context.Background()); len(rs) == 1 {
			if d := agent.SlurmDiff(agent.ReserveSpec{Start: before.Start, End: before.End, Nodes: before.Nodes, Identity: before.Identity}, rs[0]); d != "" {
				t.Errorf("re-created as %+v: %s", rs[0], d)
			}
			t.Logf("re-created after state loss: %+v", rs[0])
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent did not re-create the lost reservation")
		}
	}
}

package agent_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/slurm"
	"lookahead/torque"
	"lookahead/wire"
)

// slurmCaptures are the slurm package's real Slurm 22.05.8 captures
// (slurm/testdata/README.md says how and when each was made), read in
// place rather than copied.
var slurmCaptures = filepath.Join("..", "slurm", "testdata")

func slurmFixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(slurmCaptures, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// capturedSlurm is the first capture's cluster at the moment of
// squeue.json, with the three reservations then in force: grid-r1 and
// maint-1 from show-reservation-two.txt, grid-u2 (created just before
// squeue.json) from show-reservation-after-delete.txt.
func capturedSlurm(t *testing.T) (slurm.Snapshot, time.Time) {
	t.Helper()
	var s slurm.Snapshot
	var err error
	if s.Nodes, err = slurm.ParseSinfoJSON(slurmFixture(t, "sinfo.json")); err != nil {
		t.Fatal(err)
	}
	if s.Jobs, err = slurm.ParseSqueueJSON(slurmFixture(t, "squeue.json")); err != nil {
		t.Fatal(err)
	}
	two, err := slurm.ParseReservations(slurmFixture(t, "show-reservation-two.txt"), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	after, err := slurm.ParseReservations(slurmFixture(t, "show-reservation-after-delete.txt"), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	s.Reservations = append(two, after[1]) // grid-r1, maint-1, grid-u2
	var now time.Time
	for _, j := range s.Jobs {
		if j.Submit.After(now) {
			now = j.Submit
		}
	}
	return s, now.Add(12 * time.Second) // squeue.json was taken 12 s after the last submission
}

// The captured cluster as the forecasters read it: the down and drained
// nodes offer nothing, running jobs hold their cores, the job bound to
// grid-r1 names it, reservations are holds (maint-1 over whole nodes).
func TestSlurmSnapshotOfCapture(t *testing.T) {
	s, now := capturedSlurm(t)
	cpus := map[string]int{"vm": 8, "ghost1": 4, "ghost2": 4}
	snap := agent.WithHolds(slurm.ForecastSnapshot(s, "sl", now), agent.SlurmHolds(s.Reservations, cpus, "grid-", now.Unix()))
	usable := 0
	for _, n := range snap.Nodes {
		if n.Usable() {
			usable += n.Procs
		}
	}
	if usable != 8 || len(snap.Nodes) != 3 {
		t.Fatalf("nodes %+v", snap.Nodes)
	}
	states := map[string]string{}
	held := 0
	for _, j := range snap.Jobs {
		states[j.ID] = j.State
		if j.Running() {
			held += j.Procs
			if len(j.Hosts) != 1 || j.Hosts[0].Procs != j.Procs || j.Started == 0 {
				t.Errorf("running job %+v", j)
			}
		}
	}
	if held != 6 || states["4"] != "Q" || states["6"] != "Q" || states["7"] != "Q" {
		t.Errorf("jobs %v, %d cores held", states, held)
	}
	if j := snap.Jobs[slices.IndexFunc(snap.Jobs, func(j forecast.LocalJob) bool { return j.ID == "4" })]; j.Reservation != "grid-r1" {
		t.Errorf("job 4 bound to %q", j.Reservation)
	}
	byID := map[string]forecast.Reservation{}
	for _, r := range snap.Reservations {
		byID[r.ID] = r
	}
	if r := byID["maint-1"]; len(r.Hosts) != 3 || r.Hosts[2] != (forecast.HostProcs{Node: "vm", Procs: 8}) || r.Job != "" {
		t.Errorf("maint-1 as a hold: %+v (whole nodes)", r)
	}
	if r := byID["grid-u2"]; r.Job != "u2" || len(r.Hosts) != 1 || r.Hosts[0].Procs != 2 {
		t.Errorf("grid-u2 (no CoreIDs line: CoreCnt) as a hold: %+v", r)
	}
}

// The built-in engine under the captured slurm.conf against backfill's
// planned starts in the same capture (squeue --json start_time, the figure
// squeue --start prints): coverage (jobs Slurm planned that the forecast
// predicts) and error.
func TestSlurmForecastAgainstBackfillCapture(t *testing.T) {
	s, now := capturedSlurm(t)
	pol, err := agent.LoadSlurmPolicy(filepath.Join(slurmCaptures, "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	cpus := map[string]int{"vm": 8, "ghost1": 4, "ghost2": 4}
	snap := agent.WithHolds(slurm.ForecastSnapshot(s, "sl", now), agent.SlurmHolds(s.Reservations, cpus, "la.", now.Unix()))
	f, preds, err := sim.Build(snap, now.Unix(), now.Add(24*time.Hour).Unix(), pol.Policy, forecast.DefaultPricing())
	if err != nil || f.Validate() != nil {
		t.Fatal(err, f.Validate())
	}
	cov, errs := compareStarts(s.Jobs, preds)
	t.Logf("capture: %d of %d planned starts predicted, errors %v (s)", cov.Predicted, cov.Planned, errs)
	if cov.Planned != 2 || cov.Predicted != 2 {
		t.Errorf("coverage %+v", cov)
	}
	for _, e := range errs {
		if e < -120 || e > 120 {
			t.Errorf("a start is %d s off Slurm's plan", e)
		}
	}
}

// A cluster without a usable node gives a forecast with no capacity, not
// none.
func TestSlurmNoUsableNodeForecastsNoCapacity(t *testing.T) {
	s, now := capturedSlurm(t)
	for i := range s.Nodes {
		s.Nodes[i].Flags = append(s.Nodes[i].Flags, "DRAIN")
	}
	snap := slurm.ForecastSnapshot(s, "sl", now)
	f, _, err := agent.BuiltinEngine{Horizon: time.Hour, Policy: sim.EASY, Pricing: forecast.DefaultPricing()}.Forecast(t.Context(), snap, now)
	if err != nil || f.Validate() != nil || len(f.Nodes) != 0 || len(f.Slots) != 0 {
		t.Fatalf("forecast %+v, %v", f, err)
	}
}

func TestSlurmBatchJobs(t *testing.T) {
	jobs, err := slurm.ParseSqueueJSON(slurmFixture(t, "squeue-completing.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]torque.BatchJob{}
	for _, j := range jobs {
		got[strconv.FormatInt(j.ID, 10)] = agent.BatchJobOf(j)
	}
	if b := got["7"]; !b.Done() || b.Started != 0 || b.ExitStatus != nil {
		t.Errorf("job cancelled before it ran: %+v", b)
	}
	if b := got["1"]; b.State != "R" || b.Started == 0 {
		t.Errorf("completing job: %+v", b)
	}
	if b := got["4"]; b.State != "Q" || b.Reservation != "grid-r1" {
		t.Errorf("job pending in a reservation: %+v", b)
	}
}

func TestSlurmReservationSpec(t *testing.T) {
	spec := agent.ReserveSpec{Job: "g1", Start: 1000, End: 4600,
		Nodes:    []wire.NodeProcs{{Node: "b", Procs: 4}, {Node: "a", Procs: 2}},
		Identity: wire.Identity{User: "alice", Account: "proj1"}}
	rs, err := agent.SlurmReservation(spec, "la.g1", "batch", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	args, err := slurm.CreateArgs(rs, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	want := "create reservation reservationname=la.g1 users=alice starttime=1970-01-01T00:16:40 endtime=1970-01-01T01:16:40 nodes=a,b corecnt=2,4 partition=batch"
	if strings.Join(args, " ") != want {
		t.Errorf("args\n%s\nwant\n%s", strings.Join(args, " "), want)
	}
	spec.Identity.User = "root"
	if _, err := agent.SlurmReservation(spec, "la.g1", "", nil); err == nil {
		t.Error("a grid reservation for root was made")
	}
}

func TestSbatchOfPart(t *testing.T) {
	q := torque.QsubSpec{User: "alice", UID: 1001, Name: "la.g1.0", Walltime: 3599, Bind: []string{"--reservation=la.g1", "--job-name=la.g1.0"},
		Nodes:  []forecast.HostProcs{{Node: "a", Procs: 2}, {Node: "b", Procs: 4}},
		Output: "/home/alice/la.g1.0.out", Error: "/home/alice/la.g1.0.err",
		Env: []torque.EnvVar{{Name: "LOOKAHEAD_JOB", Value: "g1"}}}
	s, err := agent.SbatchOf(q, "")
	if err != nil {
		t.Fatal(err)
	}
	args, _ := slurm.SbatchArgs(s)
	want := "--parsable --uid=1001 --job-name=la.g1.0 --reservation=la.g1 --nodes=2 --nodelist=a,b --ntasks=6 --time=59 " +
		"--output=/home/alice/la.g1.0.out --error=/home/alice/la.g1.0.err --chdir=/home/alice --export=LOOKAHEAD_JOB=g1"
	if strings.Join(args, " ") != want {
		t.Errorf("args\n%s\nwant\n%s", strings.Join(args, " "), want)
	}
	for _, bad := range []func(*torque.QsubSpec){
		func(q *torque.QsubSpec) { q.User = "root" },
		func(q *torque.QsubSpec) { q.UID = 0 },
		func(q *torque.QsubSpec) { q.Walltime = 59 },
		func(q *torque.QsubSpec) { q.Bind = nil },
	} {
		b := q
		bad(&b)
		if _, err := agent.SbatchOf(b, ""); err == nil {
			t.Errorf("accepted %+v", b)
		}
	}
}

// startCoverage counts the pending jobs backfill planned a start for and
// how many of them a forecast predicts.
type startCoverage struct{ Planned, Predicted int }

// compareStarts compares a forecast's predictions with backfill's planned
// starts (squeue --json start_time of pending jobs, the figure squeue
// --start prints; Slurm has none for jobs backfill did not reach or bound
// to a reservation not yet started): the coverage, and per predicted job
// the error predicted - planned in seconds, in job order. Pure.
func compareStarts(jobs []slurm.Job, preds []forecast.Prediction) (startCoverage, []int64) {
	at := map[string]int64{}
	for _, p := range preds {
		at[p.Job] = p.Start
	}
	var c startCoverage
	var errs []int64
	for _, j := range jobs {
		if j.State != "PENDING" || j.Start == nil {
			continue
		}
		c.Planned++
		if p, ok := at[strconv.FormatInt(j.ID, 10)]; ok {
			c.Predicted++
			errs = append(errs, p-j.Start.Unix())
		}
	}
	return c, errs
}

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the trace's zone loads without the host's database

	"lookahead/forecast/sim"
	"lookahead/internal/cli"
)

const kthHead = "../../forecast/swf/testdata/KTH-SP2-1996-2.1-cln.head800.swf"

// --maui-config replays with the site's policy and says, once, what it
// cannot model.
func TestSimulateMauiConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "maui.cfg")
	os.WriteFile(cfg, []byte("RESERVATIONDEPTH 4\nBACKFILLPOLICY BESTFIT\nXFACTORWEIGHT 10\nBYPASSWEIGHT 3\n"), 0o644)
	var out, errOut bytes.Buffer
	o := simulateOptions{trace: kthHead, nodes: 25, ppn: 4, mauiCfg: cfg, output: cli.FormatJSON, progress: "never"}
	if err := runSimulate(context.Background(), o, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var rep simulateReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Policy != "maui.cfg "+cfg || len(rep.Unmodelled) != 1 || !strings.Contains(rep.Unmodelled[0], "BYPASSWEIGHT") {
		t.Errorf("report policy %q, unmodelled %q", rep.Policy, rep.Unmodelled)
	}
	if strings.Count(errOut.String(), "warning: not modelled: maui.cfg:4: BYPASSWEIGHT") != 1 {
		t.Errorf("stderr %q", errOut.String())
	}
	// the metrics are those of that policy
	tr, err := readSWF(kthHead, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(cfg)
	defer f.Close()
	mc, err := sim.ReadMauiConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.RunWith(sim.UniformCluster(25, 4), tr.SimJobs(), mc.Policy, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics != rep.Metrics {
		t.Errorf("metrics %+v, want %+v", rep.Metrics, res.Metrics)
	}
	easy, _ := sim.RunWith(sim.UniformCluster(25, 4), tr.SimJobs(), sim.EASY, sim.Options{})
	if easy.Metrics == rep.Metrics {
		t.Errorf("the maui.cfg policy changed nothing against easy")
	}
}

func TestSimulateMauiConfigErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "maui.cfg")
	os.WriteFile(bad, []byte("RESERVATIONDEPTH\nRESERVATIONPOLICY SOMETIMES\n"), 0o644)
	wantSimulateUsage(t, []usageCase{
		{[]string{"--trace", kthHead, "--maui-config", bad}, "maui.cfg:1"},
		{[]string{"--trace", kthHead, "--maui-config", bad + ".missing"}, "--maui-config"},
		{[]string{"--trace", kthHead, "--maui-config", bad, "--policy", "easy"}, "exclude each other"},
	})
}

// usageCase is simulate's arguments and what its usage error must say.
type usageCase struct {
	args []string
	want string
}

// wantSimulateUsage runs simulate with each case's arguments and wants a
// usage error (exit 2) naming what is wrong.
func wantSimulateUsage(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, c := range cases {
		cmd := newSimulateCommand()
		cmd.SetArgs(c.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if err == nil || cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v (exit %d), want a usage error with %q", c.args, err, cli.ExitCode(err), c.want)
		}
	}
}

// --slurm-config replays with a slurm.conf's policy (the captured
// cluster's: backfill to depth 500) and says what it cannot model; it
// excludes --policy and --maui-config.
func TestSimulateSlurmConfig(t *testing.T) {
	cfg := "../../slurm/testdata/slurm.conf"
	var out, errOut bytes.Buffer
	o := simulateOptions{trace: kthHead, nodes: 25, ppn: 4, slurmCfg: cfg, output: cli.FormatJSON, progress: "never"}
	if err := runSimulate(context.Background(), o, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var rep simulateReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Policy != "slurm.conf "+cfg || !strings.Contains(strings.Join(rep.Unmodelled, "\n"), "bf_interval=5") ||
		!strings.Contains(errOut.String(), "warning: not modelled: SchedulerParameters bf_window=1440") {
		t.Errorf("report policy %q, unmodelled %q, stderr %q", rep.Policy, rep.Unmodelled, errOut.String())
	}
	if _, code := run(t, "simulate", "--trace", kthHead, "--slurm-config", cfg, "--maui-config", cfg); code != cli.ExitUsage {
		t.Errorf("--slurm-config with --maui-config: exit %d", code)
	}
}

// simulate runs on the trace's wall clock: KTH's header puts its time 0 at
// 843480031 in Europe/Stockholm, where a daily 08:00-18:00 standing
// reservation falls; --timezone and --start move it, and the schedule's
// times are Unix times on that clock.
func TestSimulateOnTheTracesClock(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "maui.cfg")
	os.WriteFile(cfg, []byte("RESERVATIONDEPTH 2\nSRCFG[day] PERIOD=DAY STARTTIME=08:00:00 ENDTIME=18:00:00 HOSTLIST=n0001,n0002,n0003,n0004,n0005,n0006,n0007,n0008,n0009,n0010,n0011,n0012\n"), 0o644)
	run := func(flags clockFlags) map[string]sim.JobResult {
		t.Helper()
		sched := filepath.Join(dir, "sched.jsonl")
		o := simulateOptions{trace: kthHead, nodes: 25, ppn: 4, mauiCfg: cfg, limit: 300, schedule: sched, output: cli.FormatJSON, progress: "never", clock: flags}
		var out, errOut bytes.Buffer
		if err := runSimulate(context.Background(), o, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(errOut.String(), "UnixStartTime") {
			t.Errorf("a trace with a header was warned about: %s", errOut.String())
		}
		return readSchedule(t, sched)
	}
	own := run(clockFlags{})
	// the same replay through the library on the header's clock
	tr, err := readSWF(kthHead, 300)
	must(t, err)
	stockholm, err := time.LoadLocation("Europe/Stockholm")
	must(t, err)
	f, _ := os.Open(cfg)
	mc, err := sim.ReadMauiConfig(f)
	f.Close()
	must(t, err)
	clock, _ := sim.TraceClock(sim.ClockSetting{}, sim.ClockSetting{Origin: 843480031, HasOrigin: true, Zone: stockholm})
	jobs := tr.SimJobs()
	clock.Jobs(jobs)
	res, err := sim.Run(sim.UniformCluster(25, 4), jobs, clock.Site(mc.Policy))
	must(t, err)
	for _, r := range res.Jobs {
		if o := own[r.ID]; o.Start != r.Start || o.Submit != r.Submit {
			t.Fatalf("job %s: simulate says submit %d start %d, the header's clock %d %d", r.ID, o.Submit, o.Start, r.Submit, r.Start)
		}
	}
	moved := func(name string, other map[string]sim.JobResult, shift int64) {
		n := 0
		for id, r := range own {
			if other[id].Start-other[id].Submit != r.Start-r.Submit {
				n++
			}
			if other[id].Submit != r.Submit+shift {
				t.Fatalf("%s: job %s submitted at %d, want %d", name, id, other[id].Submit, r.Submit+shift)
			}
		}
		if n == 0 {
			t.Errorf("%s: no job's wait changed: the clock is not followed", name)
		}
	}
	moved("--timezone UTC", run(clockFlags{timezone: "UTC"}), 0)
	moved("--start 6 h later", run(clockFlags{start: "843501631"}), 6*3600)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readSchedule(t *testing.T, path string) map[string]sim.JobResult {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	out := map[string]sim.JobResult{}
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var r sim.JobResult
		must(t, dec.Decode(&r))
		out[r.ID] = r
	}
	return out
}

// A trace without UnixStartTime replayed with a policy tied to the wall
// clock is warned about; bad clock flags are usage errors naming the flag.
func TestSimulateClockWarningsAndErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "maui.cfg")
	os.WriteFile(cfg, []byte("FSPOLICY DEDICATEDPS\nFSUSERWEIGHT 10\nUSERCFG[DEFAULT] FSTARGET=10\n"), 0o644)
	trace := filepath.Join(dir, "t.swf")
	os.WriteFile(trace, []byte("1 0 1 10 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n"), 0o644)
	var out, errOut bytes.Buffer
	o := simulateOptions{trace: trace, procs: 4, mauiCfg: cfg, output: cli.FormatJSON, progress: "never"}
	if err := runSimulate(context.Background(), o, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "no UnixStartTime header") || !strings.Contains(errOut.String(), "--start") {
		t.Errorf("stderr %q: want the guessed clock said, with the flag to give", errOut.String())
	}
	errOut.Reset()
	o.clock.start = "2025-11-28T08:00:00Z"
	if err := runSimulate(context.Background(), o, &out, &errOut); err != nil || errOut.Len() != 0 {
		t.Errorf("with --start: %v, stderr %q", err, errOut.String())
	}
	wantSimulateUsage(t, []usageCase{
		{[]string{"--trace", kthHead, "--start", "yesterday"}, "--start"},
		{[]string{"--trace", kthHead, "--start", "-5"}, "--start"},
		{[]string{"--trace", kthHead, "--timezone", "Mars/Olympus"}, "--timezone"},
	})
}

// srzone is a real Maui 3.3.1's schedule made in Asia/Kolkata (UTC+05:30),
// with daily standing reservations on local time and fairshare intervals
// on the epoch, given as the SWF trace a site would give
// (forecast/sim/testdata/mauiref, docs/simulator.md, "The wall clock"):
// simulate on the trace's own clock reproduces every start; the same
// trace in UTC, or starting in 1970, does not.
func TestSimulateRealMauiInAnotherZone(t *testing.T) {
	dir := "../../forecast/sim/testdata/mauiref/srzone"
	maui := readSimstatWaits(t, filepath.Join(dir, "simstat.out.gz"))
	run := func(flags clockFlags) (exact int) {
		t.Helper()
		sched := filepath.Join(t.TempDir(), "sched.jsonl")
		o := simulateOptions{trace: filepath.Join(dir, "workload.swf"), nodes: 48, ppn: 8, mauiCfg: filepath.Join(dir, "maui.cfg"),
			schedule: sched, output: cli.FormatJSON, progress: "never", clock: flags}
		var out, errOut bytes.Buffer
		if err := runSimulate(context.Background(), o, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		got := readSchedule(t, sched)
		for id, wait := range maui {
			if r, ok := got[id]; ok && r.Start-r.Submit == wait {
				exact++ // (the same start: submit times are Maui's on any clock)
			}
		}
		return exact
	}
	if n := run(clockFlags{}); n != len(maui) {
		t.Fatalf("on the trace's clock: %d of %d starts exact, want all", n, len(maui))
	}
	utc, epoch := run(clockFlags{timezone: "UTC"}), run(clockFlags{start: "0"})
	t.Logf("the trace's clock: %d/%d exact; in UTC: %d; from 1970: %d", len(maui), len(maui), utc, epoch)
	if utc == len(maui) {
		t.Errorf("in UTC every start is still exact: the reference does not tell the zone")
	}
}

// readSimstatWaits reads Maui's simstat.out(.gz): job number → its wait
// (start − queue time).
func readSimstatWaits(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	must(t, err)
	b, err := io.ReadAll(z)
	must(t, err)
	out := map[string]int64{}
	for _, l := range strings.Split(string(b), "\n") {
		fl := strings.Fields(l)
		if len(fl) < 12 || fl[0] == "VERSION" || strings.HasPrefix(fl[0], "#") {
			continue
		}
		id, err := strconv.Atoi(strings.TrimLeft(fl[0], "j"))
		must(t, err)
		queue, err := strconv.ParseInt(fl[8], 10, 64)
		must(t, err)
		start, err := strconv.ParseInt(fl[10], 10, 64)
		must(t, err)
		out[strconv.Itoa(id)] = start - queue
	}
	return out
}

package maui

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"lookahead/forecast"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n%s", name, got)
	}
}

func TestSimConfigFromRealSiteConfig(t *testing.T) {
	// The PBS-mode maui.cfg of the captured NORMAL-mode Maui, plus
	// credential priorities a site may have.
	site := string(readFixture(t, "normal-pbs/maui.cfg")) +
		"CLASSCFG[batch] MAXJOB=10 PRIORITY=100\nUSERCFG[bob] PRIORITY=5\nRESERVATIONDEPTH 4\nSCHEDCFG[vm] MODE=NORMAL SERVER=vm:42559\nSIMSTOPITERATION 7\nXFACTORWEIGHT 10\n"
	var buf bytes.Buffer
	err := WriteSimConfig(&buf, strings.NewReader(site), SimConfig{Host: "vm", Port: 40123, Admin: "maui", Step: 0, QueueDepth: 500})
	if err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, must := range []string{"BACKFILLPOLICY        FIRSTFIT", "RESERVATIONDEPTH 4", "CLASSCFG[batch] MAXJOB=10",
		"SERVERPORT               40123", "SERVERMODE               SIMULATION", "SIMSTOPITERATION         1", "QUEUETIMEWEIGHT          0"} {
		if !strings.Contains(out, must) {
			t.Errorf("missing %q", must)
		}
	}
	var kept []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "#") {
			kept = append(kept, l)
		}
	}
	body := strings.Join(kept, "\n") + "\n"
	for _, mustNot := range []string{"RMCFG", "AMCFG", "42559", "PRIORITY=100\n", "PRIORITY=5", "USERCFG[bob]", "SCHEDCFG", "SIMSTOPITERATION 7", "XFACTORWEIGHT 10", "LOGLEVEL              3"} {
		if strings.Contains(body, mustNot) {
			t.Errorf("kept %q", mustNot)
		}
	}
	golden(t, "simconfig-normal-pbs.cfg", buf.Bytes())
}

func sampleSnapshot() forecast.Snapshot {
	return forecast.Snapshot{
		Site: "alpha", Taken: 1000,
		Nodes: []forecast.SnapshotNode{
			{Name: "n01", Procs: 4, State: []string{"job-exclusive"}, Speed: 1, MemMB: 8000},
			{Name: "n02", Procs: 4, State: []string{"free"}, Speed: 1},
			{Name: "n03", Procs: 4, State: []string{"down", "offline"}, Speed: 1},
		},
		Jobs: []forecast.LocalJob{
			{ID: "7.vm", User: "bob", Group: "chem", Queue: "batch", State: "Q", Procs: 2, Walltime: 600, Submitted: 900, Priority: 1},
			{ID: "5.vm", User: "amy", Queue: "long", State: "R", Procs: 3, Walltime: 3600, Used: 1200, Started: 0, Hosts: []forecast.HostProcs{{Node: "n01", Procs: 3}}},
			{ID: "8.vm", User: "cat", Account: "p1", Queue: "batch", State: "Q", Procs: 8, Nodes: 2, PPN: 4, Walltime: 1200, Submitted: 800, Priority: 5},
			{ID: "9.vm", User: "dan", State: "H", Procs: 1, Walltime: 60},
			{ID: "6.vm", User: "eve", State: "R", Procs: 1, Walltime: 60, Hosts: []forecast.HostProcs{{Node: "n03", Procs: 1}}},
		},
	}
}

func TestBuildTraces(t *testing.T) {
	tr, err := BuildTraces(sampleSnapshot(), TraceOptions{Now: 1000, Order: []string{"7"}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "build-resource.trace", tr.Resource)
	golden(t, "build-workload.trace", tr.Workload)
	// Running job first, then the live order (7 before 8 although 8 has
	// the higher snapshot priority); held job 9 not simulated; job 6 runs
	// on a down node and is skipped with a reason.
	if want := map[string]string{"j00001": "5.vm", "j00002": "7.vm", "j00003": "8.vm"}; !reflect.DeepEqual(tr.IDs, want) {
		t.Errorf("ids %v", tr.IDs)
	}
	if len(tr.Skipped) != 1 || !strings.HasPrefix(tr.Skipped[0], "6.vm: runs on unusable node n03") {
		t.Errorf("skipped %v", tr.Skipped)
	}
	run := tr.Jobs["j00001"]
	if run.Class != RunningClass || run.Runtime != 2400 || !reflect.DeepEqual(run.HostList, []string{"n01", "n01", "n01"}) {
		t.Errorf("running job %+v", run)
	}
	if j8 := tr.Jobs["j00003"]; j8.TPN != 4 || j8.Tasks != 8 {
		t.Errorf("nodes=2:ppn=4 job %+v", j8)
	}
	recs, err := ParseWorkload(bytes.NewReader(tr.Workload))
	if err != nil || len(recs) != 3 {
		t.Fatalf("written workload does not parse back: %v", err)
	}
	// Without a live order, snapshot priority decides: 8 before 7.
	tr, _ = BuildTraces(sampleSnapshot(), TraceOptions{Now: 1000})
	if tr.IDs["j00002"] != "8.vm" {
		t.Errorf("priority order %v", tr.IDs)
	}
	snap := sampleSnapshot()
	snap.Nodes = snap.Nodes[2:]
	if _, err := BuildTraces(snap, TraceOptions{Now: 1000}); err == nil {
		t.Error("snapshot without usable nodes accepted")
	}
	snap = sampleSnapshot()
	snap.Jobs[0].User = "bad user"
	if _, err := BuildTraces(snap, TraceOptions{Now: 1000}); err == nil {
		t.Error("user with a space accepted into a trace")
	}
}

// TestTraceOrderIsMauiOrderForEqualPriorities is the captured evidence the
// priority carry-over relies on: with equal priorities (sim1, iteration 11,
// all 11), showq -i lists the idle jobs in workload-trace order.
func TestTraceOrderIsMauiOrderForEqualPriorities(t *testing.T) {
	order, err := LiveOrder(context.Background(), mustFixture(t, "testdata/sim1-iter011"))
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := ParseWorkload(bytes.NewReader(readFixture(t, "sim1/traces/workload.trace")))
	pos := map[string]int{}
	for i, r := range recs {
		pos[r.ID] = i
	}
	for i := 1; i < len(order); i++ {
		if pos[order[i-1]] > pos[order[i]] {
			t.Errorf("showq -i order %v is not trace order", order)
		}
	}
	if !reflect.DeepEqual(order, []string{"j04", "j06", "j08"}) {
		t.Errorf("order %v", order)
	}
}

func mustFixture(t *testing.T, dir string) Runner {
	r, err := NewFixtureRunner(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRankOfShortTorqueIDs(t *testing.T) {
	jobs := []forecast.LocalJob{{ID: "3.vm", State: "Q"}, {ID: "4.vm", State: "Q"}, {ID: "5.vm", State: "Q"}}
	got := queuedInOrder(jobs, []string{"5", "3"})
	if got[0].ID != "5.vm" || got[1].ID != "3.vm" || got[2].ID != "4.vm" {
		t.Errorf("order %v", got)
	}
}

// snapshotFromRecords makes a snapshot of queued jobs from trace records
// (walltime = the record's runtime) on nodes c001.. with procs each.
func snapshotFromRecords(recs []WorkloadRecord, nodes, procs int) forecast.Snapshot {
	var snap forecast.Snapshot
	snap.Site = "bench"
	for i := 1; i <= nodes; i++ {
		snap.Nodes = append(snap.Nodes, forecast.SnapshotNode{Name: "c" + strings.Repeat("0", 3-len(strconv.Itoa(i))) + strconv.Itoa(i), Procs: procs, State: []string{"free"}, Speed: 1})
	}
	for _, r := range recs {
		snap.Jobs = append(snap.Jobs, forecast.LocalJob{ID: r.ID, User: r.User, Group: r.Group, Account: noneEmpty(r.Account),
			Queue: "batch", State: forecast.JobQueued, Procs: r.Tasks, Walltime: r.Runtime(), Submitted: r.Queue})
	}
	return snap
}

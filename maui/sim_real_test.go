package maui

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
)

// These tests run the real Maui 3.3.1 when LOOKAHEAD_MAUI_BIN names the
// directory holding maui and its clients; CI has no Maui and skips them.
// LOOKAHEAD_MAUI_LONG=1 adds the 500/2000-job step-policy measurements.
func mauiBin(t *testing.T) string {
	dir := os.Getenv("LOOKAHEAD_MAUI_BIN")
	if dir == "" {
		t.Skip("LOOKAHEAD_MAUI_BIN not set: no real Maui to run")
	}
	return dir
}

// mauiProcesses lists maui processes whose command line or cwd mentions
// home (none must outlive a run).
func mauiProcesses(t *testing.T, workDir string) []string {
	out, _ := exec.Command("pgrep", "-a", "maui").Output()
	var left []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		pid, _, _ := strings.Cut(l, " ")
		if cwd, err := os.Readlink("/proc/" + pid + "/cwd"); err == nil && strings.HasPrefix(cwd, workDir) {
			left = append(left, l)
		}
	}
	return left
}

// sim1Snapshot is the captured sim1 scenario as a snapshot: 8 nodes x 2
// procs, j01..j08 queued at T0 (j09/j10 arrive later in the capture and
// are not part of a snapshot).
func sim1Snapshot(t *testing.T) (forecast.Snapshot, int64) {
	recs, err := ParseWorkload(bytes.NewReader(readFixture(t, "sim1/traces/workload.trace")))
	if err != nil {
		t.Fatal(err)
	}
	now := int64(1795316424)
	snap := forecast.Snapshot{Site: "sim1", Taken: now}
	for i := 1; i <= 8; i++ {
		snap.Nodes = append(snap.Nodes, forecast.SnapshotNode{Name: fmt.Sprintf("n%02d", i), Procs: 2, State: []string{"free"}, Speed: 1})
	}
	for _, r := range recs[:8] {
		snap.Jobs = append(snap.Jobs, forecast.LocalJob{ID: r.ID + ".vm", User: r.User, Group: r.Group, Account: r.Account,
			Queue: "batch", State: forecast.JobQueued, Procs: r.Tasks, Walltime: r.Runtime(), Submitted: now})
	}
	return snap, now
}

func TestRealMauiForecastSim1(t *testing.T) {
	bin := mauiBin(t)
	work := t.TempDir()
	snap, now := sim1Snapshot(t)
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: work, SiteConfig: "testdata/sim1/maui.cfg"})
	preds, st, err := s.ForecastOrdered(context.Background(), snap, nil, now, now+6*3600)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stats %+v", st)
	for _, p := range preds {
		t.Logf("%+v", p)
	}
	if len(preds) != 8 {
		t.Fatalf("%d predictions", len(preds))
	}
	if left := mauiProcesses(t, work); len(left) > 0 {
		t.Fatalf("maui left running: %v", left)
	}
}

// startErrors compares predicted starts (relative) with a reference
// schedule's, inside the window and over everything predicted.
func startErrors(preds []forecast.Prediction, ref []WorkloadRecord, window int64) (meanIn, maxIn, meanAll, maxAll float64, nIn, nAll int) {
	r0 := int64(math.MaxInt64)
	for _, r := range ref {
		r0 = min(r0, r.Start)
	}
	want := map[string]int64{}
	for _, r := range ref {
		want[r.ID] = r.Start - r0
	}
	for _, p := range preds {
		w, ok := want[p.Job]
		if !ok {
			continue
		}
		e := math.Abs(float64(p.Start - w))
		meanAll += e
		maxAll = math.Max(maxAll, e)
		nAll++
		if w < window {
			meanIn += e
			maxIn = math.Max(maxIn, e)
			nIn++
		}
	}
	if nIn > 0 {
		meanIn /= float64(nIn)
	}
	if nAll > 0 {
		meanAll /= float64(nAll)
	}
	return
}

func TestRealMauiStepPolicies(t *testing.T) {
	bin := mauiBin(t)
	if os.Getenv("LOOKAHEAD_MAUI_LONG") == "" {
		t.Skip("LOOKAHEAD_MAUI_LONG not set")
	}
	sizes := strings.Split(orDefault(os.Getenv("LOOKAHEAD_MAUI_SIZES"), "500"), ",")
	modes := strings.Split(orDefault(os.Getenv("LOOKAHEAD_MAUI_MODES"), "fixed60,policy"), ",")
	resource := readFixture(t, "sim5/resource64.trace")
	for _, n := range sizes {
		workload := readFixture(t, "sim5/workload"+n+".trace.gz")
		ref, err := ParseWorkload(bytes.NewReader(readFixture(t, "sim5/simstat.exact"+n+".out.gz")))
		if err != nil {
			t.Fatal(err)
		}
		r0, last := int64(math.MaxInt64), int64(0)
		for _, r := range ref {
			r0, last = min(r0, r.Start), max(last, r.Completion)
		}
		horizon := last - r0 + 3600 // the whole exact schedule, plus an hour
		for _, mode := range modes {
			p := map[string]StepPolicy{
				"fixed30": {Near: -1, Coarse: 30}, "fixed60": {Near: -1, Coarse: 60}, "fixed300": {Near: -1, Coarse: 300},
				"policy": {Near: 12 * 3600, Coarse: 300, Plain: true}, "policy60": {Near: 12 * 3600, Coarse: 60, Plain: true},
				"exact": {Near: 1 << 40, Coarse: 300, Plain: true}, "oracle": {Near: 12 * 3600, Coarse: 300},
				"planned": {Near: 12 * 3600, Coarse: 300, StopEach: true},
			}[mode]
			s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: t.TempDir(), SiteConfig: "testdata/sim5/maui.cfg.exact", Policy: p, Timeout: 20 * time.Minute})
			preds, st, err := s.RunTraces(context.Background(), resource, workload, 0, horizon)
			if err != nil {
				t.Fatalf("%s/%s: %v", n, mode, err)
			}
			mi, xi, ma, xa, ni, na := startErrors(preds, ref, 12*3600)
			load, _ := os.ReadFile("/proc/loadavg")
			t.Logf("jobs=%s mode=%s wall=%.1fs mauiCPU=%.1fs exact=%d piped=%d probes=%d overshoots=%d skipped=%d coarse=%d cmds=%d planned=%v off=%q diverged=%q late=%q merged=%d | 12h window: n=%d mean|dstart|=%.0fs max=%.0fs | all: n=%d mean=%.0fs max=%.0fs | load %s",
				n, mode, st.Wall.Seconds(), st.MauiCPU.Seconds(), st.ExactStops, st.Pipelined, st.Probes, st.Overshoots, st.SkippedEnds, st.CoarseIters, st.Commands,
				st.Planned, st.OracleOff, st.Diverged, st.Late, st.Merged, ni, mi, xi, na, ma, xa, strings.TrimSpace(string(load)))
			sort.Slice(preds, func(i, j int) bool { return preds[i].Job < preds[j].Job })
		}
	}
}

// TestRealMauiImposesLiveOrder: three whole-machine jobs run one after the
// other, so their forecast order is exactly the priority order imposed.
func TestRealMauiImposesLiveOrder(t *testing.T) {
	bin := mauiBin(t)
	snap, now := sim1Snapshot(t)
	snap.Jobs = nil
	for i, id := range []string{"10.vm", "11.vm", "12.vm"} {
		snap.Jobs = append(snap.Jobs, forecast.LocalJob{ID: id, User: "u" + id[:2], State: forecast.JobQueued, Procs: 16,
			Walltime: 600, Submitted: now - int64(100*(3-i)), Priority: int64(3 - i)})
	}
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: t.TempDir()})
	for _, c := range []struct {
		order []string
		want  []string
	}{
		{nil, []string{"10.vm", "11.vm", "12.vm"}},                        // snapshot priority
		{[]string{"12", "10", "11"}, []string{"12.vm", "10.vm", "11.vm"}}, // live order, Maui's short ids
		{[]string{"11.vm", "12.vm", "10.vm"}, []string{"11.vm", "12.vm", "10.vm"}},
	} {
		preds, _, err := s.ForecastOrdered(context.Background(), snap, c.order, now, now+4*3600)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, p := range preds {
			got = append(got, p.Job)
			if p.Start != now+int64(600*i) {
				t.Errorf("order %v: %s starts at %+d", c.order, p.Job, p.Start-now)
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("order %v: forecast %v, want %v", c.order, got, c.want)
		}
	}
}

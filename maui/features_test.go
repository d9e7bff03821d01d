package maui

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"lookahead/forecast"
)

// featureSnapshot has the shape of the live Torque 6.1.3 capture
// (torque/testdata/torque-6.1.3/live-features): node vm with property
// bigmem and job 41.vm asking for nodes=1:ppn=2:bigmem (here released, Q),
// plus a smaller node without properties and a job without features.
func featureSnapshot() forecast.Snapshot {
	return forecast.Snapshot{Site: "vm", Taken: 1000,
		Nodes: []forecast.SnapshotNode{
			{Name: "vm", Procs: 16, State: []string{forecast.NodeFree}, Features: []string{"bigmem"}},
			{Name: "plain", Procs: 4, State: []string{forecast.NodeFree}},
		},
		Jobs: []forecast.LocalJob{
			{ID: "41.vm", User: "alice", State: forecast.JobQueued, Procs: 2, Nodes: 1, PPN: 2, Walltime: 300,
				Submitted: 900, Features: []string{"bigmem"}},
			{ID: "42.vm", User: "bob", State: forecast.JobQueued, Procs: 1, Walltime: 300, Submitted: 900},
		}}
}

// TestTracesCarryJobFeatures: the queued job's features go to the workload
// trace's field 20 (the requested features MTraceLoadWorkload reads), the
// node's to the resource trace's field 15.
func TestTracesCarryJobFeatures(t *testing.T) {
	tr, err := BuildTraces(featureSnapshot(), TraceOptions{Now: 1000})
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string][]string{}
	for _, l := range strings.Split(string(tr.Workload), "\n")[1:] {
		if f := strings.Fields(l); len(f) > 0 {
			fields[tr.IDs[f[0]]] = f
		}
	}
	if f := fields["41.vm"]; len(f) != workloadFieldCount || f[19] != "[bigmem]" {
		t.Errorf("41.vm record %q: want field 20 [bigmem]", f)
	}
	if f := fields["42.vm"]; len(f) != workloadFieldCount || f[19] != "[NONE]" {
		t.Errorf("42.vm record %q: want field 20 [NONE]", f)
	}
	if !bytes.Contains(tr.Resource, []byte(" vm NONE ")) || !bytes.Contains(tr.Resource, []byte(" [bigmem] ")) {
		t.Errorf("resource trace %s: want node vm with [bigmem]", tr.Resource)
	}
	if _, err := ParseWorkload(bytes.NewReader(tr.Workload)); err != nil {
		t.Fatalf("written workload does not parse back: %v", err)
	}
	snap := featureSnapshot()
	snap.Jobs[0].Features = []string{"big mem"}
	tr, err = BuildTraces(snap, TraceOptions{Now: 1000})
	if err != nil || len(tr.Skipped) != 1 || !strings.HasPrefix(tr.Skipped[0], "41.vm: feature") {
		t.Errorf("feature with a space: skipped %v, %v; want 41.vm skipped with a reason", tr.Skipped, err)
	}
}

// TestRealMauiFollowsJobFeatures: real Maui 3.3.1, fed the traces, starts
// the feature job on vm only; the same snapshot without the job's feature
// request puts it on the smaller node plain (sim1's maui.cfg, MINRESOURCE),
// so the traces' field 20 is what keeps it off plain.
func TestRealMauiFollowsJobFeatures(t *testing.T) {
	bin := mauiBin(t)
	snap := featureSnapshot()
	hosts := realMauiHosts(t, bin, snap)
	if h := hosts["41.vm"]; len(h) != 1 || h[0].Node != "vm" {
		t.Errorf("41.vm on %+v, want vm (the only bigmem node)", h)
	}
	if h := hosts["42.vm"]; len(h) != 1 || h[0].Node != "plain" {
		t.Errorf("42.vm on %+v, want plain (MINRESOURCE, no feature)", h)
	}
	snap.Jobs[0].Features = nil
	if h := realMauiHosts(t, bin, snap)["41.vm"]; len(h) != 1 || h[0].Node != "plain" {
		t.Errorf("41.vm without its feature request on %+v, want plain", h)
	}
}

func realMauiHosts(t *testing.T, bin string, snap forecast.Snapshot) map[string][]forecast.HostProcs {
	t.Helper()
	work := t.TempDir()
	s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: work, SiteConfig: "testdata/sim1/maui.cfg"})
	preds, _, err := s.ForecastOrdered(context.Background(), snap, nil, snap.Taken, snap.Taken+3600)
	if err != nil {
		t.Fatal(err)
	}
	if left := mauiProcesses(t, work); len(left) > 0 {
		t.Fatalf("maui left running: %v", left)
	}
	hosts := map[string][]forecast.HostProcs{}
	for _, p := range preds {
		hosts[p.Job] = p.Hosts
	}
	return hosts
}

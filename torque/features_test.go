package torque

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"lookahead/forecast"
	"lookahead/forecast/sim"
)

// liveFeatures is the capture of a node property and a held job asking for
// it on the live Torque 6.1.3 (testdata/torque-6.1.3/live-features/README.md).
const liveFeatures = "testdata/torque-6.1.3/live-features"

func readFeatures(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(liveFeatures, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// featuresSnapshot is the Client's snapshot of the live capture: node vm
// with property bigmem, held job 41.vm asking for nodes=1:ppn=2:bigmem.
func featuresSnapshot(t *testing.T) *forecast.Snapshot {
	t.Helper()
	r := &mapRunner{out: map[string][]byte{
		"pbsnodes": readFeatures(t, "pbsnodes-bigmem.xml"),
		"qstat":    readFeatures(t, "qstat-f-t-bigmem.xml"),
	}}
	snap, err := NewClient(r, ClientConfig{Site: "vm"}).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestLiveFeaturesCapture(t *testing.T) {
	snap := featuresSnapshot(t)
	if len(snap.Nodes) != 1 || snap.Nodes[0].Name != "vm" || !slices.Equal(snap.Nodes[0].Features, []string{"bigmem"}) {
		t.Fatalf("nodes %+v: want vm with features [bigmem]", snap.Nodes)
	}
	if len(snap.Jobs) != 1 {
		t.Fatalf("jobs %+v: want only 41.vm (the others completed)", snap.Jobs)
	}
	j := snap.Jobs[0]
	if j.ID != "41.vm" || j.State != forecast.JobHeld || j.Procs != 2 || j.Nodes != 1 || j.PPN != 2 ||
		j.User != "alice" || !slices.Equal(j.Features, []string{"bigmem"}) {
		t.Errorf("job %+v: want 41.vm held, alice, 1 node × 2 procs, features [bigmem]", j)
	}
	// qstat -f -x (without -t) printed the same bytes.
	if !bytes.Equal(readFeatures(t, "qstat-f-bigmem.xml"), readFeatures(t, "qstat-f-t-bigmem.xml")) {
		t.Error("qstat -f -x and -f -x -t captures differ")
	}
	all, err := ParseQstatXML(bytes.NewReader(readFeatures(t, "qstat-f-t-bigmem.xml")))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range all {
		if j.ID != "41.vm" && j.Features != nil {
			t.Errorf("job %s (nodes=N:ppn=K, no property) got features %v", j.ID, j.Features)
		}
	}
}

func TestNodeSpecRequired(t *testing.T) {
	cases := []struct {
		in             string
		feats, require []string
	}{
		{"1:ppn=2:bigmem", []string{"bigmem"}, []string{"bigmem"}}, // 6.1.3, captured live
		{"1:ppn=2", nil, nil},
		{"vm", nil, nil},
		{"vm:ppn=3:bigmem", []string{"bigmem"}, []string{"bigmem"}},
		{"2:ib:fast:ppn=4", []string{"ib", "fast"}, []string{"ib", "fast"}},
		{"1:bigmem:bigmem", []string{"bigmem", "bigmem"}, []string{"bigmem"}},
		{"1:gpus=1:bigmem", []string{"bigmem"}, []string{"bigmem"}},
		{"2:ib:ppn=4+1:ppn=2", []string{"ib"}, nil},
		{"2:ib:fast:ppn=4+1:fast", []string{"ib", "fast", "fast"}, []string{"fast"}},
	}
	for _, c := range cases {
		spec, err := ParseNodeSpec(c.in)
		if err != nil || !slices.Equal(spec.Features, c.feats) || !slices.Equal(spec.Required, c.require) {
			t.Errorf("ParseNodeSpec(%q) = features %v required %v, %v; want %v, %v", c.in, spec.Features, spec.Required, err, c.feats, c.require)
		}
	}
}

// TestLiveFeatureJobPlacedOnPropertyNode: the captured job, released
// (state Q), on a cluster of the captured node and a larger node without
// the property that is free and first in order, runs only on vm. Before
// job features were read it went to the first node with room.
func TestLiveFeatureJobPlacedOnPropertyNode(t *testing.T) {
	snap := featuresSnapshot(t)
	plain := forecast.SnapshotNode{Name: "a-plain", Procs: 16, State: []string{forecast.NodeFree}, Speed: 1}
	snap.Nodes = append([]forecast.SnapshotNode{plain}, snap.Nodes...)
	snap.Jobs[0].State = forecast.JobQueued
	now := snap.Taken
	for _, pol := range []sim.Policy{sim.EASY, sim.FCFS} {
		_, preds, err := sim.Build(*snap, now, now+86400, pol, forecast.DefaultPricing())
		if err != nil {
			t.Fatal(err)
		}
		if len(preds) != 1 || preds[0].Job != "41.vm" {
			t.Fatalf("predictions %+v: want 41.vm", preds)
		}
		if h := preds[0].Hosts; len(h) != 1 || h[0].Node != "vm" || h[0].Procs != 2 {
			t.Errorf("41.vm placed on %+v, want 2 processors on vm (the only bigmem node)", h)
		}
	}
}

// FuzzParseNodeSpec: any request the parser takes gives positive
// processors, properties without separators, and required properties that
// the request names.
func FuzzParseNodeSpec(f *testing.F) {
	for _, s := range []string{"1:ppn=2:bigmem", "1:ppn=2", "vm", "2:ib:ppn=4+1:ppn=2", "2:ib:fast:ppn=4+1:fast", "1:gpus=1:a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseNodeSpec(s)
		if err != nil {
			return
		}
		if spec.Procs < 1 {
			t.Fatalf("%q: procs %d", s, spec.Procs)
		}
		for _, r := range spec.Required {
			if r == "" || bytes.ContainsAny([]byte(r), ":+=") || !slices.Contains(spec.Features, r) {
				t.Fatalf("%q: required %q of %v", s, r, spec.Features)
			}
		}
	})
}

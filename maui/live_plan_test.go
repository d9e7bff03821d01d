package maui

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"lookahead/torque"
)

// TestLivePlanSameAsPlain (LOOKAHEAD_LIVE_PLAN=1 and LOOKAHEAD_MAUI_BIN,
// against the live Torque/Maui of this host): one snapshot and live
// priority order, forecast by the Maui engine with the plain exact
// stepping (the stepping before plans) and with the plan, at the same
// now: the predictions must be equal and the second run planned.
// LOOKAHEAD_LIVE_PLAN_SNAPSHOT names a file the snapshot is written to.
func TestLivePlanSameAsPlain(t *testing.T) {
	bin := mauiBin(t)
	if os.Getenv("LOOKAHEAD_LIVE_PLAN") == "" {
		t.Skip("LOOKAHEAD_LIVE_PLAN not set: the live Torque/Maui is not to be used")
	}
	ctx := context.Background()
	tc := torque.NewClient(torque.NewExecRunner(torque.ExecConfig{Path: "/usr/local/bin"}), torque.ClientConfig{Site: "vm"})
	snap, err := tc.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	order, err := LiveOrder(ctx, NewExecRunner(ExecConfig{BinDir: bin, HomeDir: "/var/spool/maui"}))
	if err != nil {
		t.Fatal(err)
	}
	if f := os.Getenv("LOOKAHEAD_LIVE_PLAN_SNAPSHOT"); f != "" {
		b, _ := json.MarshalIndent(snap, "", " ")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("snapshot: %d nodes, %d jobs, live order %v", len(snap.Nodes), len(snap.Jobs), order)
	now := time.Now().Unix()
	var got [2]SimStats
	var preds [2]any
	for i, p := range []StepPolicy{{Plain: true}, {}} {
		s := NewSimulator(SimulatorConfig{BinDir: bin, WorkDir: t.TempDir(), SiteConfig: "/var/spool/maui/maui.cfg", Policy: p})
		pr, st, err := s.ForecastOrdered(ctx, *snap, order, now, now+24*3600)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		got[i], preds[i] = st, pr
		t.Logf("%+v: %+v", p, st)
		for _, x := range pr {
			t.Logf("  %s %+d..%+d %v", x.Job, x.Start-now, x.End-now, x.Hosts)
		}
	}
	if !reflect.DeepEqual(preds[0], preds[1]) {
		t.Errorf("planned forecast differs from the plain one")
	}
	if !got[1].Planned {
		t.Errorf("not planned: %+v", got[1])
	}
}

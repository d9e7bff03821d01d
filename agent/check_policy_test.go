package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookahead/forecast"
	"lookahead/forecast/sim"
)

func TestLoadSitePolicy(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "maui.cfg")
	if err := os.WriteFile(cfg, []byte("RESERVATIONDEPTH 4\nBACKFILLPOLICY BESTFIT\nBYPASSWEIGHT 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := LoadSitePolicy(cfg, true, "easy")
	if err != nil {
		t.Fatal(err)
	}
	if sp.Policy.Depth != 4 || sp.Policy.Backfill != sim.BestFit || sp.Source != cfg {
		t.Errorf("policy %+v from %s", sp.Policy, sp.Source)
	}
	if len(sp.Unmodelled) != 1 || !strings.Contains(sp.CheckDetail(), "not modelled (1):\n  maui.cfg:3: BYPASSWEIGHT 3") {
		t.Errorf("check detail %q", sp.CheckDetail())
	}
	// the default location, absent: the named policy
	sp, err = LoadSitePolicy(filepath.Join(dir, "none.cfg"), false, "depth=3")
	if err != nil || sp.Policy.Depth != 3 || sp.Source != "policy depth=3" {
		t.Errorf("fallback %+v %v", sp, err)
	}
	if !strings.Contains(sp.CheckDetail(), "no site maui.cfg") {
		t.Errorf("fallback detail %q", sp.CheckDetail())
	}
	// named explicitly, absent or broken: errors
	if _, err := LoadSitePolicy(filepath.Join(dir, "none.cfg"), true, "easy"); err == nil {
		t.Error("a missing required maui.cfg was accepted")
	}
	if err := os.WriteFile(cfg, []byte("RESERVATIONDEPTH lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSitePolicy(cfg, false, "easy"); err == nil || !strings.Contains(err.Error(), "maui.cfg:1") {
		t.Errorf("bad value: %v", err)
	}
}

// The built-in engine carries what it cannot model into every forecast.
func TestBuiltinEngineUnmodelled(t *testing.T) {
	snap := forecast.Snapshot{Site: "alpha", Nodes: []forecast.SnapshotNode{{Name: "n1", Procs: 4, State: []string{forecast.NodeFree}, Speed: 1}}}
	e := BuiltinEngine{Horizon: time.Hour, Policy: sim.EASY, Unmodelled: []string{"maui.cfg:3: FSPOLICY DEDICATEDPS: fairshare is not modelled"}, Pricing: forecast.DefaultPricing()}
	f, _, err := e.Forecast(context.Background(), snap, time.Unix(1763780000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Unmodelled) != 1 || f.Unmodelled[0] != e.Unmodelled[0] {
		t.Errorf("forecast unmodelled %q", f.Unmodelled)
	}
}

// A site's standing reservations sit on the host's local time, and what
// the simulator does not follow of them shows in check.
func TestLoadSitePolicyStanding(t *testing.T) {
	path := filepath.Join(t.TempDir(), "maui.cfg")
	cfg := "SRCFG[maint] PERIOD=DAY STARTTIME=02:00:00 ENDTIME=04:00:00 HOSTLIST=n01 USERLIST=alice ACCESS=SHARED\n"
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadSitePolicy(path, true, "easy")
	if err != nil {
		t.Fatal(err)
	}
	if p.Policy.Standing == nil || p.Policy.Standing.Zone != time.Local || len(p.Policy.Standing.Res) != 1 {
		t.Fatalf("standing %+v", p.Policy.Standing)
	}
	if d := p.CheckDetail(); !strings.Contains(d, "SRCFG[maint] ACCESS=SHARED: not modelled") {
		t.Errorf("check detail lacks the ACCESS note:\n%s", d)
	}
}

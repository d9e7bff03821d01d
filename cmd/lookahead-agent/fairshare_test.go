package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With a maui.cfg that has fairshare, the built-in engine reads the
// site's usage (Maui's FS files in <maui.home>/stats) and check says so;
// a fresh site (no file) starts from zero; without fairshare there is no
// such line and no source.
func TestFairshareWiring(t *testing.T) {
	home := t.TempDir()
	cfgText, err := os.ReadFile("../../agent/testdata/fairshare/maui.cfg")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "maui.cfg"), cfgText, 0o644)
	os.Mkdir(filepath.Join(home, "stats"), 0o755)
	for _, f := range []string{"FS.1795623840", "FS.1795623960"} {
		b, err := os.ReadFile("../../agent/testdata/fairshare/" + f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(home, "stats", f), b, 0o644)
	}
	cfg, err := loadConfig(writeFile(t, "a.yaml", "site: a\nmaui:\n  home: "+home+"\n  diagnose: /nonexistent/diagnose\n"), true, newRootCommand().Flags())
	if err != nil {
		t.Fatal(err)
	}
	if e := builtinEngine(cfg); e.Fairshare == nil || e.Policy.Fairshare == nil {
		t.Fatalf("no fairshare source: %+v", e)
	}
	r, ok := checkFairshare(context.Background(), cfg, time.Unix(1795624138, 0))
	if !ok || !r.OK || !strings.Contains(r.Detail, "7 credentials with usage") {
		t.Errorf("check at the capture: %+v", r)
	}
	// a day later no file is in the window and diagnose -f cannot run: an error to fix
	r, _ = checkFairshare(context.Background(), cfg, time.Unix(1795624138+86400, 0))
	if r.OK || !strings.Contains(r.Fix, "stats") {
		t.Errorf("check with nothing readable: %+v", r)
	}
	os.WriteFile(filepath.Join(home, "maui.cfg"), []byte("RESERVATIONDEPTH 2\n"), 0o644)
	if _, ok := checkFairshare(context.Background(), cfg, time.Now()); ok || builtinEngine(cfg).Fairshare != nil {
		t.Error("no fairshare in maui.cfg: a fairshare line or source")
	}
}

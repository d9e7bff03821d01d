package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookahead/forecast/sim"
)

// The built-in engine follows <maui.home>/maui.cfg when there is one
// (not with the simulated backend), maui.config when set ("none": the
// policy key), and refuses a broken or
// missing named file at validation.
func TestBuiltinEngineFollowsSiteMauiConfig(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "maui.cfg"), []byte("RESERVATIONDEPTH 6\nRESERVATIONPOLICY HIGHEST\nBYPASSWEIGHT 3\n"), 0o644)
	other := filepath.Join(t.TempDir(), "site.cfg")
	os.WriteFile(other, []byte("RESERVATIONDEPTH 2\n"), 0o644)
	for _, c := range []struct {
		body      string
		depth     int
		highest   bool
		notes     int
		validates bool
	}{
		{"site: a\npolicy: depth=3\nmaui:\n  home: " + home + "\n", 6, true, 1, true},
		{"site: a\npolicy: depth=3\nmaui:\n  home: " + home + "\n  config: none\n", 3, false, 0, true},
		{"site: a\nmaui:\n  home: " + home + "\n  config: " + other + "\n", 2, false, 0, true},
		{"site: a\npolicy: depth=3\nmaui:\n  home: " + t.TempDir() + "\n", 3, false, 0, true},
		// the simulated backend's site runs the policy key, whatever Maui this host has
		{"site: a\nbackend: simulated\npolicy: depth=3\nmaui:\n  home: " + home + "\n", 3, false, 0, true},
		{"site: a\nmaui:\n  config: " + other + ".missing\n", 0, false, 0, false},
	} {
		cfg, err := loadConfig(writeFile(t, "a.yaml", c.body), true, newRootCommand().Flags())
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); (err == nil) != c.validates {
			t.Errorf("%q: validate %v", c.body, err)
			continue
		}
		if !c.validates {
			if r := checkSitePolicy(cfg); r.OK || !strings.Contains(r.Detail, "missing") {
				t.Errorf("%q: check %+v", c.body, r)
			}
			continue
		}
		e := builtinEngine(cfg)
		if e.Policy.Depth != c.depth || (e.Policy.Reservation == sim.Highest) != c.highest || len(e.Unmodelled) != c.notes {
			t.Errorf("%q: policy %+v, unmodelled %q", c.body, e.Policy, e.Unmodelled)
		}
		if r := checkSitePolicy(cfg); !r.OK {
			t.Errorf("%q: check %+v", c.body, r)
		}
	}
}

// maui.timezone is the site's zone for both engines: the built-in engine
// places standing windows on it and the maui engine runs its private Maui
// in it; unset, both use this host's local zone.
func TestEnginesFollowMauiTimezone(t *testing.T) {
	if _, err := time.LoadLocation("Europe/Paris"); err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "maui.cfg"), []byte("SRCFG[maint] PERIOD=DAY STARTTIME=02:00:00 ENDTIME=06:00:00 HOSTLIST=n01\n"), 0o644)
	for _, c := range []struct{ body, want string }{
		{"site: a\nmaui:\n  home: " + home + "\n  timezone: Europe/Paris\n", "Europe/Paris"},
		{"site: a\nmaui:\n  home: " + home + "\n", "Local"},
	} {
		cfg, err := loadConfig(writeFile(t, "a.yaml", c.body), true, newRootCommand().Flags())
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		st := builtinEngine(cfg).Policy.Standing
		if st == nil || st.Zone.String() != c.want {
			t.Errorf("%q: built-in standing %+v, want zone %s", c.body, st, c.want)
		}
		if z := simulator(cfg).Zone(); z.String() != c.want {
			t.Errorf("%q: maui engine zone %s, want %s", c.body, z, c.want)
		}
	}
}

package maui

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// effectiveTZ is the TZ a process started with env sees (the last one
// wins), and whether any is set.
func effectiveTZ(env []string) (string, bool) {
	v, ok := "", false
	for _, kv := range env {
		if rest, found := strings.CutPrefix(kv, "TZ="); found {
			v, ok = rest, true
		}
	}
	return v, ok
}

// The private Maui runs in the site's zone: a named zone is TZ=<name>; the
// host's local zone sets nothing, so Maui reads it as the site's Maui on
// this host does. It never runs in UTC unless the site's zone is UTC.
func TestZoneEnv(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	cases := []struct {
		loc  *time.Location
		want []string
	}{
		{paris, []string{"TZ=Europe/Paris"}},
		{time.UTC, []string{"TZ=UTC"}},
		{time.Local, nil},
		{nil, nil},
	}
	for _, c := range cases {
		if got := zoneEnv(c.loc); !reflect.DeepEqual(got, c.want) {
			t.Errorf("zoneEnv(%v) = %q, want %q", c.loc, got, c.want)
		}
	}
}

// The environment the engine builds for the Maui server and its clients
// carries the configured zone, and by default the inherited TZ untouched
// (the old engine forced TZ=UTC on every site).
func TestSimulatorEnvZone(t *testing.T) {
	t.Setenv("TZ", "Asia/Tokyo") // this process's zone setting, inherited
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	env := NewSimulator(SimulatorConfig{BinDir: t.TempDir(), Zone: paris}).env("/h")
	if tz, _ := effectiveTZ(env); tz != "Europe/Paris" {
		t.Errorf("zone Europe/Paris: Maui runs with TZ=%q", tz)
	}
	if !strings.Contains(strings.Join(env, "\n"), "MAUIHOMEDIR=/h") {
		t.Errorf("no MAUIHOMEDIR in %q", env)
	}
	env = NewSimulator(SimulatorConfig{BinDir: t.TempDir()}).env("/h")
	if tz, _ := effectiveTZ(env); tz != "Asia/Tokyo" {
		t.Errorf("default (local) zone: Maui runs with TZ=%q, want the inherited Asia/Tokyo", tz)
	}
}

// Standing windows are on the site zone's wall clock: 02:00-06:00 in
// Europe/Paris (UTC+1 in November) is 01:00-05:00 UTC.
func TestStandingEdgesInSiteZone(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	now := time.Date(2026, 11, 25, 16, 30, 0, 0, time.UTC).Unix()
	site := []byte("SRCFG[maint] PERIOD=DAY STARTTIME=02:00:00 ENDTIME=06:00:00 HOSTLIST=n01\n")
	got := standingEdges(site, now, now+36*3600, paris)
	h := func(hours float64) int64 { return int64(hours * 3600) }
	if want := []int64{h(8.5), h(12.5), h(32.5)}; !reflect.DeepEqual(got, want) {
		t.Errorf("edges %v, want %v", got, want)
	}
}

// Maui's phantom reservation after a standing window (duration INFINITE,
// a real capture) is read, not an error that fails the whole forecast.
func TestParseShowresNodesPhantom(t *testing.T) {
	sn, err := ParseShowresNodes(strings.NewReader(string(readFixture(t, "srzone/showres_n_phantom.out"))))
	if err != nil {
		t.Fatal(err)
	}
	if len(sn.Rows) != 24 || sn.At != "Thu Nov 26 04:27:00" {
		t.Fatalf("%d rows at %q", len(sn.Rows), sn.At)
	}
	want := ShowresNodeRow{Node: "n01", Type: "Job", ID: "\x0100006", JobState: "Running", Tasks: 2, Start: -Infinity, Duration: Infinity, StartTime: "Thu Jan 1 06:00:00"}
	if sn.Rows[3] != want {
		t.Errorf("row 3 = %+v, want %+v", sn.Rows[3], want)
	}
}

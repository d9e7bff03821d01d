package web_test

import (
	"encoding/json"
	"os"
	"testing"

	"lookahead/internal/durfmt"
)

// TestPageDurations: the page writes every duration (site TTL and ages,
// clock offsets, walltimes) as internal/durfmt does, the one format of
// the binaries and of the API's why-texts: its dur, run in Chromium,
// agrees with durfmt.Seconds on each case of the format and on a sweep.
func TestPageDurations(t *testing.T) {
	path := chromium(t)
	src, err := os.ReadFile("assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	secs := []int64{0, 1, 45, 59, 60, 61, 90, 605, 3599, 3600, 3601, 3660, 7500, 7507, 86399, 86400, 172800, 360000, -90, -3601}
	for s := int64(0); s < 400000; s += 997 {
		secs = append(secs, s)
	}
	arg, err := json.Marshal(secs)
	if err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t, path)
	// The page's script only declares until DOMContentLoaded, which a
	// blank page has had: evaluating it defines dur and runs nothing.
	if !eval[bool](t, br, string(src)+"\n;typeof dur === \"function\"") {
		t.Fatal("app.js defines no dur")
	}
	got := eval[[]string](t, br, string(arg)+".map(dur)")
	if len(got) != len(secs) {
		t.Fatalf("dur gave %d texts for %d durations", len(got), len(secs))
	}
	for i, s := range secs {
		if want := durfmt.Seconds(s); got[i] != want {
			t.Errorf("dur(%d) = %q on the page, durfmt says %q", s, got[i], want)
		}
	}
}

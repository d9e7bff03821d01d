package main

import (
	"bytes"
	"strings"
	"testing"

	"lookahead/wire"
)

// The PARTS column says what each site's agent says of running grid
// jobs' parts: yes, no, or ? when it does not say (an older agent).
func TestSitesShowWhetherSitesRunParts(t *testing.T) {
	yes, no := true, false
	var out bytes.Buffer
	err := writeSites(&out, wire.SitesReply{Now: 1000, Sites: []wire.SiteStatus{
		{Site: "alpha", RunsParts: &no}, {Site: "beta", RunsParts: &yes}, {Site: "gamma"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	col := strings.Index(lines[0], "PARTS")
	if col < 0 || len(lines) != 4 {
		t.Fatalf("sites:\n%s", out.String())
	}
	for i, want := range []string{"no", "yes", "?"} {
		if got := strings.Fields(lines[i+1][col:])[0]; got != want {
			t.Fatalf("%s: PARTS %q, want %q:\n%s", strings.Fields(lines[i+1])[0], got, want, out.String())
		}
	}
}

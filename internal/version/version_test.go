package version

import (
	"runtime/debug"
	"testing"
)

func TestFromInfo(t *testing.T) {
	cases := []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"module version", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"devel with revision", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, "dev-0123456789ab+dirty"},
		{"clean revision", debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}}, "dev-abc"},
		{"nothing", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, ""},
	}
	for _, c := range cases {
		if got := fromInfo(&c.info); got != c.want {
			t.Errorf("%s: fromInfo = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestStampWins(t *testing.T) {
	old := Stamp
	t.Cleanup(func() { Stamp = old })
	Stamp = "1.4.0-1"
	if got := String(); got != "1.4.0-1" {
		t.Fatalf("String() = %q with a stamp, want the stamp", got)
	}
}

// TestUnknownSaysSo: a build with no stamp and nothing from Go says it has
// no version information (it said a bare "dev"); a stamp or Go's version
// wins.
func TestUnknownSaysSo(t *testing.T) {
	if got := pick("", ""); got != "dev (built without version information)" {
		t.Errorf("nothing recorded: %q", got)
	}
	if got := pick("", "v0.0.0-20261129032854-84d6efbac990"); got != "v0.0.0-20261129032854-84d6efbac990" {
		t.Errorf("Go's pseudo-version: %q", got)
	}
	if got := pick("1.4.0-1", "v1.2.3"); got != "1.4.0-1" {
		t.Errorf("stamp and Go's version: %q", got)
	}
}

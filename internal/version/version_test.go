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

// Package version owns the version string of every lookahead binary.
package version

import (
	"runtime/debug"
	"sync"
)

// Stamp is set at build time with
// -ldflags "-X lookahead/internal/version.Stamp=...". Release builds
// (scripts/build-rpms.sh) set it.
var Stamp = ""

var fromBuild = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return fromInfo(info)
})

// String is the version of this binary: the build-time stamp when there
// is one, else the module version Go recorded (`go install
// lookahead/cmd/...@v1.2.3`), else the VCS revision (with "+dirty" for a
// modified tree), else "dev".
func String() string {
	if Stamp != "" {
		return Stamp
	}
	if v := fromBuild(); v != "" {
		return v
	}
	return "dev"
}

func fromInfo(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return ""
	}
	return "dev-" + rev + dirty
}

// Package version owns the version string of every lookahead binary.
package version

import (
	"regexp"
	"runtime/debug"
	"strings"
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

// Unknown is the version of a build that recorded none: no stamp, and Go
// wrote neither a module version nor a VCS revision (a plain `go install`
// in a git worktree, outside git, or with -buildvcs=false). It says so,
// where a bare "dev" left the reader guessing.
const Unknown = "dev (built without version information)"

// String is the version of this binary: the build-time stamp when there
// is one, else the module version Go recorded (`go install
// lookahead/cmd/...@v1.2.3`, or the pseudo-version of a build in a git
// clone), else the VCS revision (with "+dirty" for a modified tree), else
// Unknown.
func String() string { return pick(Stamp, fromBuild()) }

func pick(stamp, fromBuild string) string {
	switch {
	case stamp != "":
		return stamp
	case fromBuild != "":
		return fromBuild
	}
	return Unknown
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

// semVer is what a NATS micro service's version must look like (SemVer
// 2.0 without build metadata, which a "+dirty" build has).
var semVer = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// SemVer is v as a micro service may carry it: v without a leading "v"
// when that is SemVer (a package's stamp, Go's module or pseudo-version),
// else 0.0.0 (a modified tree, a bare revision, Unknown), which micro
// accepts where it refuses the service for a version it cannot read.
func SemVer(v string) string {
	if v = strings.TrimPrefix(v, "v"); semVer.MatchString(v) {
		return v
	}
	return "0.0.0"
}

// Service is this binary's version for its NATS micro service (the broker's
// and the agent's): String as SemVer.
func Service() string { return SemVer(String()) }

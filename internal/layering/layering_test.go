package layering

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// deps lists the module packages that the packages matching patterns
// depend on, themselves included, per package (go list -deps).
func deps(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-deps", "-test=false", "-f", `{{if not .Standard}}{{.ImportPath}}{{range .Deps}} {{.}}{{end}}{{end}}`}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	return m
}

func under(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

// rootsOf lists the packages matched by patterns (go list without -deps).
func rootsOf(t *testing.T, patterns ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, patterns...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", patterns, err)
	}
	return strings.Fields(string(out))
}

// checkNoDep fails for each package matched by patterns that depends on a
// package under one of the forbidden roots.
func checkNoDep(t *testing.T, why string, patterns []string, forbidden ...string) {
	t.Helper()
	all := deps(t, patterns...)
	for _, p := range rootsOf(t, patterns...) {
		for _, d := range all[p] {
			for _, f := range forbidden {
				if under(d, f) {
					t.Errorf("%s depends on %s: %s", p, d, why)
				}
			}
		}
	}
}

func TestBrokerDoesNotDependOnTheAgent(t *testing.T) {
	checkNoDep(t, "a broker build must not carry the agent",
		[]string{"./broker/..."}, "lookahead/agent", "lookahead/internal/demo")
}

func TestOnlyBinariesDependOnTheCLI(t *testing.T) {
	var libs []string
	for _, p := range rootsOf(t, "./...") {
		if !under(p, "lookahead/cmd") && !under(p, "lookahead/internal/cli") {
			libs = append(libs, p)
		}
	}
	checkNoDep(t, "only cmd/... uses internal/cli (the version is internal/version)",
		libs, "lookahead/internal/cli")
}

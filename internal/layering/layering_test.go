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
		[]string{"./broker/..."}, "lookahead/agent", "lookahead/demo")
}

// TestWebViewCarriesNoConfigLoader: the broker's web view needs one
// loopback rule, not the daemons' configuration loader and its file
// formats (internal/loopback holds the rule).
func TestWebViewCarriesNoConfigLoader(t *testing.T) {
	checkNoDep(t, "the web view takes its configuration as values; its loopback check is internal/loopback",
		[]string{"./broker/web"}, "lookahead/internal/config", "github.com/spf13/viper", "github.com/spf13/afero",
		"github.com/pelletier/go-toml", "go.yaml.in/yaml", "gopkg.in/yaml.v3")
}

// TestInternalIsTheGroundFloor: the packages under internal/ (config,
// metrics, natsconn, cli, ...) are the foundation every part builds on;
// none of them, nor their tests, imports a lookahead package outside
// internal/ (a composition of agents and brokers, such as the demo or the
// failover tests, lives above them: demo/, failover/).
func TestInternalIsTheGroundFloor(t *testing.T) {
	var above []string
	for _, p := range rootsOf(t, "./...") {
		if !under(p, "lookahead/internal") {
			above = append(above, p)
		}
	}
	internal := rootsOf(t, "./internal/...")
	for _, p := range internal {
		for _, imp := range imports(t, p) {
			for _, a := range above {
				if imp == a {
					t.Errorf("%s imports %s: internal/ is the ground floor, nothing in it may import a package above it", p, imp)
				}
			}
		}
	}
	if len(internal) < 5 || len(above) < 5 {
		t.Fatalf("internal %v, above %v: go list found too little", internal, above)
	}
}

// imports lists what package p and its tests import directly.
func imports(t *testing.T, p string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, p)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", p, err)
	}
	return strings.Fields(string(out))
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

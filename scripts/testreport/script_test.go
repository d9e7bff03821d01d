package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestScriptRunsEveryStep runs scripts/test.sh in a scratch copy of the
// repository whose steps are stand-ins that record that they ran (go
// itself is a wrapper: `go vet` passes, `go test` prints a stream with a
// failed and a skipped test and fails, anything else is the real go):
// a failing `go test` must not stop the packaging step; the end of the
// output lists the time per package, every skipped test with its reason
// and every step's result; the script exits 1.
func TestScriptRunsEveryStep(t *testing.T) {
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	root := t.TempDir()
	write := func(rel, body string, mode os.FileMode) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile("../test.sh")
	if err != nil {
		t.Fatal(err)
	}
	write("scripts/test.sh", string(script), 0o755)
	for _, f := range []string{"main.go", "report.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write("scripts/testreport/"+f, string(src), 0o644)
	}
	write("go.mod", "module lookahead\n\ngo 1.26\n", 0o644)
	ran := filepath.Join(root, "ran")
	stub := func(name string, code int) string {
		return "#!/bin/sh\necho " + name + " >>" + ran + "\necho '" + name + " ran'\nexit " + string(rune('0'+code)) + "\n"
	}
	// Every script test.sh runs is a stand-in (steps added later too);
	// chromium is unavailable: a note, not a failure.
	var scripts []string
	for _, m := range regexp.MustCompile(`\b([a-z0-9-]+)\.sh\b`).FindAllStringSubmatch(string(script), -1) {
		if m[1] != "test" && !slices.Contains(scripts, m[1]) {
			scripts = append(scripts, m[1])
			write("scripts/"+m[1]+".sh", stub(m[1], btoi(m[1] == "ensure-chromium")), 0o755)
		}
	}
	write("bin/go", `#!/bin/sh
case "$1" in
vet) echo vet >>`+ran+`; exit 0 ;;
test) echo test >>`+ran+`; cat <<'EOF'
`+stream+`EOF
exit 1 ;;
esac
exec `+realGo+` "$@"
`, 0o755)
	cmd := exec.Command("bash", filepath.Join(root, "scripts/test.sh"))
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(root, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	text := string(out)
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit %d (%v), want 1", code, err)
	}
	data, _ := os.ReadFile(ran)
	steps := strings.Fields(string(data))
	for _, s := range append(scripts, "vet", "test") {
		if !slices.Contains(steps, s) {
			t.Errorf("%s did not run; steps that ran: %q", s, steps)
		}
	}
	if i, j := slices.Index(steps, "test"), slices.Index(steps, "test-packaging"); i < 0 || j < i {
		t.Errorf("steps that ran: %q; want the packaging step after the failed go test", steps)
	}
	end := text[strings.LastIndex(text, "test-packaging ran")+1:]
	for _, want := range []string{"12.2s  FAIL lookahead/b", "SKIP lookahead/a TestLive: live_test.go:12: needs root",
		"FAIL lookahead/b TestBad", "go test                FAILED (exit 1)", "packaging              ok",
		"go vet                 ok"} {
		if !strings.Contains(end, want) {
			t.Errorf("the end of the output (after the last step) lacks %q:\n%s", want, text)
		}
	}
	if !regexp.MustCompile(`make test: 1 of [0-9]+ steps failed\n$`).MatchString(text) {
		t.Errorf("the output does not end saying one step failed:\n%s", text)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

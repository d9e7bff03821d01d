// Package docs holds the test that runs docs/quickstart.md.
package docs

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shellBlocks returns the ```sh blocks of a markdown file, in order.
func shellBlocks(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```sh":
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil || cur != nil {
		t.Fatalf("%s: %v (unclosed block: %v)", path, err, cur != nil)
	}
	return blocks
}

// TestQuickstart runs every ```sh block of docs/quickstart.md, in order,
// as one bash script, the way a new admin would type them: `go install`
// builds the binaries and nats-server from this module, nats-server runs
// with JetStream, the broker and two agents (simulated sites) start, a
// 48-processor job is submitted and must end up reserved on both sites,
// and the audit must be clean. Port 4222 is replaced by a free port, HOME
// and GOPATH are scratch directories (the module and build caches are the
// usual ones, so nothing is downloaded).
func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four binaries and runs a grid")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	blocks := shellBlocks(t, "quickstart.md")
	if len(blocks) < 5 {
		t.Fatalf("%d sh blocks in quickstart.md", len(blocks))
	}
	script := "set -euo pipefail\n" + strings.Join(blocks, "\n")
	script = strings.ReplaceAll(script, "4222", strconv.Itoa(freePort(t)))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", script)
	cmd.Dir = ".." // the checkout's root, where the quickstart starts
	cmd.Env = quickstartEnv(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever the script left running
	home := envValue(cmd.Env, "HOME")
	if err != nil {
		t.Fatalf("quickstart failed: %v\n%s\n%s", err, out, logs(home))
	}
	text := string(out)
	for _, want := range []string{"alpha", "beta", "fresh", "state         reserved", "part        alpha/", "part        beta/",
		"reservation   ", "no findings"} {
		if !strings.Contains(text, want) {
			t.Errorf("the quickstart's output lacks %q", want)
		}
	}
	// A build from the repository says which commit it is, as the
	// packages do (issue 38: it said "dev").
	if !regexp.MustCompile(`lookahead version [0-9]+\.[0-9]+\.[0-9]+-[0-9][0-9a-z.]*\n`).MatchString(text) {
		t.Errorf("lookahead --version of the installed build is not stamped from git")
	}
	t.Logf("output:\n%s", text)
	if t.Failed() {
		t.Log(logs(home))
	}
}

// quickstartEnv is a clean environment: scratch HOME and GOPATH, the
// usual module and build caches, no network, no LOOKAHEAD_* variables.
func quickstartEnv(t *testing.T) []string {
	t.Helper()
	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	modcache, gocache := goEnv("GOMODCACHE"), goEnv("GOCACHE")
	tmp := t.TempDir()
	env := []string{"HOME=" + filepath.Join(tmp, "home"), "GOPATH=" + filepath.Join(tmp, "gopath"),
		"GOMODCACHE=" + modcache, "GOCACHE=" + gocache, "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=readonly"}
	os.MkdirAll(filepath.Join(tmp, "home"), 0o755)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "LOOKAHEAD_"), strings.HasPrefix(name, "GO"), name == "HOME":
		default:
			env = append(env, kv)
		}
	}
	return env
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// logs is the daemons' logs from the quickstart directory, for a failure.
func logs(home string) string {
	var b strings.Builder
	for _, name := range []string{"nats.log", "broker.log", "alpha.log", "beta.log"} {
		data, _ := os.ReadFile(filepath.Join(home, "lookahead-quickstart", name))
		b.WriteString("== " + name + "\n" + string(data))
	}
	return b.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

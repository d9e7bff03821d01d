// Package clitest builds the project's binaries (and nats-server, from the
// module) for tests that run them as a user would: exit codes, the
// quickstart. Test helpers only.
package clitest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// Binaries are the project's commands.
var Binaries = []string{"lookahead", "lookahead-agent", "lookahead-broker"}

// Build builds packages (import paths such as "lookahead/cmd/lookahead"
// or "github.com/nats-io/nats-server/v2") into a fresh directory and
// returns it; binaries are named after the packages' last element
// (nats-server for nats-server/v2).
func Build(t testing.TB, packages ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := BuildTo(dir, packages...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// BuildTo builds packages into dir (see Build).
func BuildTo(dir string, packages ...string) error {
	args := append([]string{"build", "-o", dir + string(os.PathSeparator)}, packages...)
	cmd := exec.Command(goTool(), args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// AllPackages are the import paths of Binaries.
func AllPackages() []string {
	var pkgs []string
	for _, b := range Binaries {
		pkgs = append(pkgs, "lookahead/cmd/"+b)
	}
	return pkgs
}

// BuildAll builds the project's three binaries into a fresh directory.
func BuildAll(t testing.TB) string {
	t.Helper()
	return Build(t, AllPackages()...)
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// ExitCode is the exit code of a finished command's error (0 for nil);
// -1 when it did not run or was killed by a signal.
func ExitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1
		}
		return ee.ExitCode()
	}
	return -1
}

package torque

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestExecRunner(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	r := NewExecRunner(ExecConfig{Timeout: 5 * time.Second, MaxStderr: 16})
	res, err := r.Run(context.Background(), "sh", "-c", "echo out; echo 0123456789abcdefXYZ >&2; exit 153")
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "out\n" || res.ExitCode != 153 {
		t.Fatalf("got %+v", res)
	}
	if !strings.HasPrefix(string(res.Stderr), "0123456789abcdef") || !strings.Contains(string(res.Stderr), "truncated") {
		t.Fatalf("stderr not bounded: %q", res.Stderr)
	}
	if !errors.Is(ClassifyExit("qstat", nil, res), ErrUnknownJob) {
		t.Fatal("153 not classified")
	}
}

// A timed-out command is killed with its whole process group: the
// grandchild holding stdout open does not keep Run waiting.
// The grandchild (a background sleep holding stdout) must die too.
func TestExecRunnerTimeoutKillsGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	r := NewExecRunner(ExecConfig{Timeout: 300 * time.Millisecond, WaitDelay: time.Second})
	_, err := r.Run(context.Background(), "sh", "-c", "sleep 60 & echo $! > "+pidfile+"; wait")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v", err)
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; syscall.Kill(pid, 0) == nil; i++ { // bounded wait for the reaper
		if i == 1000 {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("grandchild %d survived the timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestExecRunnerNotFound(t *testing.T) {
	_, err := NewExecRunner(ExecConfig{}).Run(context.Background(), "/nonexistent/qstat")
	if err == nil || !strings.Contains(err.Error(), "qstat") {
		t.Fatalf("got %v", err)
	}
}

// Output beyond MaxStdout is an error, never a silently cut answer, and
// the command is not left blocked on a full pipe.
func TestExecRunnerStdoutBound(t *testing.T) {
	r := NewExecRunner(ExecConfig{Timeout: 20 * time.Second, MaxStdout: 1000})
	_, err := r.Run(context.Background(), "sh", "-c", "head -c 1000000 /dev/zero")
	if !errors.Is(err, ErrOutputTooLarge) || errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v", err)
	}
}

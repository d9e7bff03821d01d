package torque

import (
	"context"
	"errors"
	"os/exec"
	"strings"
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
func TestExecRunnerTimeoutKillsGroup(t *testing.T) {
	r := NewExecRunner(ExecConfig{Timeout: 200 * time.Millisecond, WaitDelay: 5 * time.Second})
	start := time.Now()
	_, err := r.Run(context.Background(), "sh", "-c", "sleep 30 & sleep 30")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("Run waited %v: the group was not killed", d)
	}
}

func TestExecRunnerNotFound(t *testing.T) {
	_, err := NewExecRunner(ExecConfig{}).Run(context.Background(), "/nonexistent/qstat")
	if err == nil || !strings.Contains(err.Error(), "qstat") {
		t.Fatalf("got %v", err)
	}
}

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

// A command whose call ends is killed with its whole process group: the
// grandchild holding stdout open (a background sleep) does not keep Run
// waiting, and dies too. The call is cancelled once the grandchild's pid
// is written, not by a short timeout: under load a 300 ms timeout fired
// before the script wrote it (no pid file, or an empty one). A timeout
// ends a call the same way (cmd.Cancel): TestExecRunnerTimeoutEndsTheCall.
func TestExecRunnerTimeoutKillsGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	r := NewExecRunner(ExecConfig{Timeout: time.Minute, WaitDelay: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(pidfile); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := r.Run(ctx, "sh", "-c", "sleep 60 & echo $! > "+pidfile+".new; mv "+pidfile+".new "+pidfile+"; wait")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %q", data)
	}
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) { // bounded wait for the reaper
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("grandchild %d survived the end of the call", pid)
		}
	}
}

// TestExecRunnerTimeoutEndsTheCall: the per-call timeout ends a command
// that would run for a minute, as ErrTimeout.
func TestExecRunnerTimeoutEndsTheCall(t *testing.T) {
	start := time.Now()
	_, err := NewExecRunner(ExecConfig{Timeout: 300 * time.Millisecond, WaitDelay: time.Second}).Run(context.Background(), "sh", "-c", "exec sleep 60")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("took %v", took)
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

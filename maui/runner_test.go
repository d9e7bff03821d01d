package maui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes an executable test stand-in for a Maui client command.
func script(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestExecRunnerResultAndEnv(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, "showq", `echo "home=$MAUIHOMEDIR tz=$TZ args=$*"; echo oops >&2; exit 3`)
	r := NewExecRunner(ExecConfig{BinDir: dir, HomeDir: "/var/spool/x", Env: []string{"TZ=UTC"}})
	res, err := r.Run(context.Background(), "showq", "-i", "a b")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Stdout); got != "home=/var/spool/x tz=UTC args=-i a b\n" || string(res.Stderr) != "oops\n" || res.ExitCode != 3 {
		t.Fatalf("got %q %q %d", got, res.Stderr, res.ExitCode)
	}
}

func TestExecRunnerMissingBinary(t *testing.T) {
	r := NewExecRunner(ExecConfig{BinDir: t.TempDir()})
	if _, err := r.Run(context.Background(), "setres"); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("err %v", err)
	}
}

func TestExecRunnerBoundsStderr(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, "diagnose", `i=0; while [ $i -lt 2000 ]; do echo "0123456789012345678901234567890123456789" >&2; i=$((i+1)); done`)
	res, err := NewExecRunner(ExecConfig{BinDir: dir, MaxStderr: 1000}).Run(context.Background(), "diagnose")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stderr) > 1100 || !strings.Contains(string(res.Stderr), "bytes of stderr dropped") {
		t.Fatalf("stderr %d bytes", len(res.Stderr))
	}
}

// TestExecRunnerKillsProcessGroup: a command that leaves a child behind
// is killed with its child when its call ends. The call is cancelled once
// the child's pid is written, not by a short timeout: under load a 300 ms
// timeout fired before the script wrote it (no pid file, or an empty one
// read as pid 0). The timeout ends a call the same way (cmd.Cancel):
// TestExecRunnerTimeoutEndsTheCall.
func TestExecRunnerKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script(t, dir, "schedctl", `sleep 60 & echo $! > `+pidFile+`.new; mv `+pidFile+`.new `+pidFile+`; wait`)
	r := NewExecRunner(ExecConfig{BinDir: dir, Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(pidFile); err == nil {
				cancelled = time.Now()
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := r.Run(ctx, "schedctl")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if took := time.Since(cancelled); took > 5*time.Second {
		t.Fatalf("took %v after the cancel", took)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %q", b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestExecRunnerTimeoutEndsTheCall: the per-call timeout ends a command
// that would run for a minute, as a timeout.
func TestExecRunnerTimeoutEndsTheCall(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, "schedctl", `exec sleep 60`)
	start := time.Now()
	_, err := NewExecRunner(ExecConfig{BinDir: dir, Timeout: 300 * time.Millisecond}).Run(context.Background(), "schedctl")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("took %v", took)
	}
}

func TestFixtureRunnerServesCaptures(t *testing.T) {
	r, err := NewFixtureRunner("testdata/sim2-setres")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := r.Run(ctx, "setres", "-u", "griduser:gridusr2", "-a", "gridacct", "-c", "batch", "-q", "high", "-n", "gridres2", "-s", "+00:30:00", "-d", "1:00:00", "TASKS==4")
	if err != nil || res.ExitCode != 1 || !strings.Contains(string(res.Stderr), "cannot select 4 tasks") || len(res.Stdout) != 0 {
		t.Fatalf("setres 02: %+v %v", res, err)
	}
	// showres was captured three times: served in order, then the last repeats.
	var counts []int
	for range 4 {
		res, err := r.Run(ctx, "showres")
		if err != nil {
			t.Fatal(err)
		}
		rows, err := ParseShowres(strings.NewReader(string(res.Stdout)))
		if err != nil {
			t.Fatal(err)
		}
		counts = append(counts, len(rows))
	}
	if want := []int{4, 15, 5, 5}; !equalInts(counts, want) {
		t.Fatalf("showres sequence %v, want %v", counts, want)
	}
	if _, err := r.Run(ctx, "showres", "-x"); !errors.Is(err, ErrNoFixture) {
		t.Fatalf("unknown command: %v", err)
	}
	if _, err := NewFixtureRunner(t.TempDir()); err == nil {
		t.Fatal("dir without INDEX.tsv accepted")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

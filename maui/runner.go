package maui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Result is what one Maui client command printed and how it exited.
// ExitCode is -1 when the process did not exit normally (killed, timed out).
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// Runner runs one Maui (or Torque) command given as an argument vector —
// never through a shell. A non-zero exit is not an error: it comes back in
// Result.ExitCode so each caller can classify it per tool (releaseres exits
// 0 on "cannot locate"; checkjob exits 1 for a finished job). error means
// the command could not be run at all (missing binary, timeout, cancelled).
// Implementations are safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (Result, error)
}

// ExecConfig configures the exec-backed Runner.
type ExecConfig struct {
	// BinDir holds the Maui client binaries (showres, setres, ...). Empty
	// means look them up in PATH.
	BinDir string
	// HomeDir is exported as MAUIHOMEDIR: the clients read maui.cfg there
	// to find the server host and port. Empty leaves the environment as is.
	HomeDir string
	// Timeout bounds every call (default 30 s).
	Timeout time.Duration
	// MaxStderr bounds the stderr bytes kept per call (default 64 KiB);
	// stdout is kept whole (showres on a large site is large).
	MaxStderr int
	// Env is added to the inherited environment (e.g. "TZ=UTC").
	Env []string
}

const (
	defaultTimeout   = 30 * time.Second
	defaultMaxStderr = 64 << 10
	killGrace        = 2 * time.Second
)

type execRunner struct{ cfg ExecConfig }

var _ Runner = (*execRunner)(nil)

// NewExecRunner returns a Runner that executes commands with os/exec: a
// timeout per call, the whole process group killed on cancel or timeout,
// stderr bounded.
func NewExecRunner(cfg ExecConfig) Runner {
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultTimeout
	}
	if cfg.MaxStderr <= 0 {
		cfg.MaxStderr = defaultMaxStderr
	}
	return &execRunner{cfg: cfg}
}

// ErrNotInstalled is wrapped when a command's binary cannot be found.
var ErrNotInstalled = errors.New("maui command not installed")

func (r *execRunner) path(name string) (string, error) {
	if r.cfg.BinDir != "" {
		p := filepath.Join(r.cfg.BinDir, name)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrNotInstalled, p, err)
		}
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrNotInstalled, name, err)
	}
	return p, nil
}

func (r *execRunner) env() []string {
	env := os.Environ()
	if r.cfg.HomeDir != "" {
		env = append(env, "MAUIHOMEDIR="+r.cfg.HomeDir)
	}
	return append(env, r.cfg.Env...)
}

// Run executes name with args. See Runner.
func (r *execRunner) Run(ctx context.Context, name string, args ...string) (Result, error) {
	path, err := r.path(name)
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var stdout bytes.Buffer
	stderr := &boundedBuffer{max: r.cfg.MaxStderr}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = r.env()
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	setProcessGroup(cmd)
	err = cmd.Run()
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("%s %v: %w (stderr: %q)", name, args, ctx.Err(), clip(res.Stderr))
	case errors.As(err, &exitErr):
		return res, nil // non-zero exit: the caller classifies it
	case err != nil:
		return res, fmt.Errorf("%s %v: %w", name, args, err)
	}
	return res, nil
}

// setProcessGroup makes cmd the leader of a new process group and kills the
// whole group when the context ends, so no child outlives a timed-out call.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = killGrace
}

// boundedBuffer keeps the first max bytes written and counts the rest.
// Safe for concurrent use.
type boundedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int
	dropped int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.max - b.buf.Len()
	switch {
	case room <= 0:
		b.dropped += len(p)
	case len(p) > room:
		b.buf.Write(p[:room])
		b.dropped += len(p) - room
	default:
		b.buf.Write(p)
	}
	return len(p), nil
}

func (b *boundedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := bytes.Clone(b.buf.Bytes())
	if b.dropped == 0 {
		return out
	}
	return append(out, fmt.Sprintf("\n[%d bytes of stderr dropped]\n", b.dropped)...)
}

// clip shortens tool output for error messages.
func clip(b []byte) string {
	const max = 512
	b = bytes.TrimSpace(b)
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

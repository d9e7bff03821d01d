// Package execx runs the external tools lookahead talks to (Torque and Maui
// clients) the one way the house style allows: an argument vector, never a
// shell; a timeout per call; the whole process group killed on timeout or
// cancellation; stderr bounded and kept for the error; stdout bounded, with
// overflow an error rather than a silently cut answer. A non-zero exit is
// not an error: it comes back in Result.ExitCode for the caller to classify
// per tool.
package execx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Result is what one command printed and how it exited. ExitCode is -1
// when the process did not exit normally (killed, timed out, not started).
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// Runner runs one command given as an argument vector. An error means the
// command could not be run to completion (not installed, timed out,
// cancelled, output too large); a non-zero exit is reported in Result.
// Implementations are safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (Result, error)
}

// Config configures the exec Runner. Zero values take the defaults.
type Config struct {
	// Dir, when set, holds the commands: relative names are looked up
	// there instead of in $PATH.
	Dir string
	// Env is added to the inherited environment (e.g. "TZ=UTC").
	Env []string
	// Timeout bounds each call (default 30 s).
	Timeout time.Duration
	// WaitDelay is how long to wait for output pipes after the process
	// group was killed (default 2 s).
	WaitDelay time.Duration
	// MaxStderr bounds the stderr kept per call (default 64 KiB); the
	// excess is dropped and marked.
	MaxStderr int
	// MaxStdout bounds stdout per call (default 256 MiB).
	MaxStdout int
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.WaitDelay <= 0 {
		c.WaitDelay = 2 * time.Second
	}
	if c.MaxStderr <= 0 {
		c.MaxStderr = 64 << 10
	}
	if c.MaxStdout <= 0 {
		c.MaxStdout = 256 << 20
	}
	return c
}

var (
	// ErrTimeout is wrapped (with context.DeadlineExceeded) when a call
	// ran past its timeout.
	ErrTimeout = errors.New("timed out")
	// ErrOutputTooLarge is wrapped when a command printed more than
	// MaxStdout.
	ErrOutputTooLarge = errors.New("output too large")
	// ErrNotInstalled is wrapped when a command's binary cannot be found.
	ErrNotInstalled = errors.New("command not installed")
)

type runner struct{ cfg Config }

var _ Runner = runner{}

// New returns a Runner that executes commands with os/exec.
func New(cfg Config) Runner { return runner{cfg: cfg.withDefaults()} }

func (r runner) Run(ctx context.Context, name string, args ...string) (Result, error) {
	return r.run(ctx, nil, name, args)
}

func (r runner) run(ctx context.Context, stdin []byte, name string, args []string) (Result, error) {
	path, err := r.lookup(name)
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), r.cfg.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = r.cfg.WaitDelay
	stdout := NewBoundedBuffer(r.cfg.MaxStdout)
	stderr := NewBoundedBuffer(r.cfg.MaxStderr)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err = cmd.Run()
	res := Result{Stdout: stdout.Kept(), Stderr: stderr.Bytes(), ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	return res, r.classify(ctx, name, args, err, stdout.Dropped() > 0, res)
}

func (r runner) lookup(name string) (string, error) {
	if r.cfg.Dir != "" && !strings.Contains(name, "/") {
		name = filepath.Join(r.cfg.Dir, name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrNotInstalled, name, err)
	}
	return p, nil
}

func (r runner) classify(ctx context.Context, name string, args []string, err error, overflow bool, res Result) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && err != nil:
		return fmt.Errorf("%s %v: %w after %s: %w (stderr: %q)", name, args, ErrTimeout, r.cfg.Timeout, ctx.Err(), Clip(res.Stderr))
	case overflow:
		return fmt.Errorf("%s %v: %w (more than %d bytes)", name, args, ErrOutputTooLarge, r.cfg.MaxStdout)
	case ctx.Err() != nil:
		return fmt.Errorf("%s %v: %w", name, args, ctx.Err())
	case err == nil:
		return nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && res.ExitCode >= 0 {
		return nil // the exit status is in Result, classified by the caller
	}
	return fmt.Errorf("%s %v: %w", name, args, err)
}

// killGroup kills the whole process group of cmd (Setpgid made the child
// its leader), so wrappers' children die too.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// BoundedBuffer keeps the first Max bytes written and counts the rest,
// draining them so a writer never blocks on a full pipe. Safe for
// concurrent use (a process may write while its output is read).
type BoundedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int
	dropped int
}

// NewBoundedBuffer keeps at most max bytes.
func NewBoundedBuffer(max int) *BoundedBuffer { return &BoundedBuffer{max: max} }

func (b *BoundedBuffer) Write(p []byte) (int, error) {
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

// Dropped is how many bytes did not fit.
func (b *BoundedBuffer) Dropped() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}

// Kept is a copy of the bytes kept.
func (b *BoundedBuffer) Kept() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// Bytes is the bytes kept, with a note of what was dropped.
func (b *BoundedBuffer) Bytes() []byte {
	out, dropped := b.Kept(), b.Dropped()
	if dropped == 0 {
		return out
	}
	return append(out, fmt.Sprintf("\n[truncated: %d bytes of stderr dropped]\n", dropped)...)
}

// Clip shortens tool output for error messages.
func Clip(b []byte) string {
	const max = 512
	b = bytes.TrimSpace(b)
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

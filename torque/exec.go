package torque

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Result is what one run of a Torque client command produced. ExitCode is
// the process exit status (0 on success); a non-zero exit is not an error of
// the Runner: callers classify it per tool.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// Runner runs one command given as an argument vector (never through a
// shell). An error means the command could not be run to completion (not
// found, timed out, cancelled); a non-zero exit is reported in Result.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (Result, error)
}

// ExecConfig configures the exec Runner.
type ExecConfig struct {
	// Timeout bounds each call (default 30 s).
	Timeout time.Duration
	// WaitDelay is how long to wait for output pipes after the process
	// group was killed (default 2 s).
	WaitDelay time.Duration
	// MaxStderr bounds the stderr kept per call (default 64 KiB); the
	// excess is dropped and marked.
	MaxStderr int
	// MaxStdout bounds stdout per call (default 256 MiB); exceeding it is
	// an error, never a silently truncated answer.
	MaxStdout int
	// Path, when set, is prepended to relative command names (e.g.
	// "/usr/local/bin"); otherwise $PATH is searched.
	Path string
	// Env, when non-nil, replaces the environment of the commands.
	Env []string
}

func (c ExecConfig) withDefaults() ExecConfig {
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

// ErrTimeout is wrapped by exec errors when a call ran past its timeout.
var ErrTimeout = errors.New("timed out")

// ErrOutputTooLarge is wrapped when a command printed more than MaxStdout.
var ErrOutputTooLarge = errors.New("output too large")

type execRunner struct{ cfg ExecConfig }

var _ Runner = execRunner{}

// NewExecRunner returns a Runner that executes commands with os/exec: one
// timeout per call, the whole process group killed on timeout or
// cancellation, stderr bounded. Safe for concurrent use.
func NewExecRunner(cfg ExecConfig) Runner { return execRunner{cfg: cfg.withDefaults()} }

func (r execRunner) Run(ctx context.Context, name string, args ...string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.resolve(name), args...)
	cmd.Env = r.cfg.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = r.cfg.WaitDelay
	stdout := &limitedBuffer{max: r.cfg.MaxStdout, fail: true}
	stderr := &limitedBuffer{max: r.cfg.MaxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	return res, r.classify(ctx, name, err, stdout, res)
}

func (r execRunner) resolve(name string) string {
	if r.cfg.Path == "" || containsSlash(name) {
		return name
	}
	return r.cfg.Path + "/" + name
}

func (r execRunner) classify(ctx context.Context, name string, err error, stdout *limitedBuffer, res Result) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && err != nil:
		return fmt.Errorf("%s: %w after %s: %w", name, ErrTimeout, r.cfg.Timeout, err)
	case stdout.overflow:
		return fmt.Errorf("%s: %w (more than %d bytes)", name, ErrOutputTooLarge, r.cfg.MaxStdout)
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", name, ctx.Err())
	case err == nil:
		return nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && res.ExitCode >= 0 {
		return nil // exit status is in Result, classified by the caller
	}
	return fmt.Errorf("%s: %w", name, err)
}

// killGroup kills the whole process group of cmd (Setpgid made the child
// its leader), so shells' or wrappers' children die too.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

func containsSlash(s string) bool { return bytes.IndexByte([]byte(s), '/') >= 0 }

// limitedBuffer keeps at most max bytes and drains the rest (so the
// command never blocks on a full pipe). With fail set the overflow is
// reported by Run as ErrOutputTooLarge; otherwise the excess is dropped
// and marked in the text.
type limitedBuffer struct {
	buf      bytes.Buffer
	max      int
	fail     bool
	overflow bool
}

const truncMark = "\n[stderr truncated]\n"

func (b *limitedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.buf.Len()
	if len(p) <= room {
		return b.buf.Write(p)
	}
	if !b.overflow && room > 0 {
		b.buf.Write(p[:room])
	}
	if !b.overflow && !b.fail {
		b.buf.WriteString(truncMark)
	}
	b.overflow = true
	return len(p), nil
}

func (b *limitedBuffer) Bytes() []byte { return b.buf.Bytes() }

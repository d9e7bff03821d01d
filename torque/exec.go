package torque

import (
	"time"

	"lookahead/internal/execx"
)

// Result is what one run of a Torque client command produced. ExitCode is
// the process exit status; a non-zero exit is not an error of the Runner:
// callers classify it per tool (ClassifyExit).
type Result = execx.Result

// Runner runs one command given as an argument vector (never through a
// shell). An error means the command could not be run to completion (not
// found, timed out, cancelled); a non-zero exit is reported in Result.
type Runner = execx.Runner

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
	// Path, when set, is where relative command names are looked up (e.g.
	// "/usr/local/bin"); otherwise $PATH is searched.
	Path string
	// Env is added to the inherited environment of the commands.
	Env []string
}

// Errors of the exec Runner, for errors.Is.
var (
	ErrTimeout        = execx.ErrTimeout
	ErrOutputTooLarge = execx.ErrOutputTooLarge
)

// NewExecRunner returns a Runner that executes commands with os/exec: one
// timeout per call, the whole process group killed on timeout or
// cancellation, stderr bounded. Safe for concurrent use.
func NewExecRunner(cfg ExecConfig) Runner {
	return execx.New(execx.Config{Dir: cfg.Path, Env: cfg.Env, Timeout: cfg.Timeout, WaitDelay: cfg.WaitDelay,
		MaxStderr: cfg.MaxStderr, MaxStdout: cfg.MaxStdout})
}

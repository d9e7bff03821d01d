package maui

import (
	"os/exec"
	"syscall"
	"time"

	"lookahead/internal/execx"
)

// Result is what one Maui client command printed and how it exited.
// ExitCode is -1 when the process did not exit normally (killed, timed out).
type Result = execx.Result

// Runner runs one Maui (or Torque) command given as an argument vector —
// never through a shell. A non-zero exit is not an error: it comes back in
// Result.ExitCode so each caller can classify it per tool (releaseres exits
// 0 on "cannot locate"; checkjob exits 1 for a finished job). error means
// the command could not be run at all (missing binary, timeout, cancelled).
// Implementations are safe for concurrent use.
type Runner = execx.Runner

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
	// MaxStderr bounds the stderr bytes kept per call (default 64 KiB).
	MaxStderr int
	// Env is added to the inherited environment (e.g. "TZ=UTC").
	Env []string
}

const killGrace = 2 * time.Second

// ErrNotInstalled is wrapped when a command's binary cannot be found.
var ErrNotInstalled = execx.ErrNotInstalled

// NewExecRunner returns a Runner that executes commands with os/exec: a
// timeout per call, the whole process group killed on cancel or timeout,
// stderr bounded.
func NewExecRunner(cfg ExecConfig) Runner {
	env := cfg.Env
	if cfg.HomeDir != "" {
		env = append([]string{"MAUIHOMEDIR=" + cfg.HomeDir}, env...)
	}
	return execx.New(execx.Config{Dir: cfg.BinDir, Env: env, Timeout: cfg.Timeout, MaxStderr: cfg.MaxStderr})
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

// clip shortens tool output for error messages.
func clip(b []byte) string { return execx.Clip(b) }

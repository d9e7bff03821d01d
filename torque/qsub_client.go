package torque

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"lookahead/internal/execx"
)

// InputRunner runs one command with bytes on its standard input (qsub
// reads the job script there), never through a shell.
type InputRunner = execx.InputRunner

// NewExecInputRunner returns an InputRunner that executes commands with
// os/exec under the same rules as NewExecRunner.
func NewExecInputRunner(cfg ExecConfig) InputRunner {
	return execx.NewInput(execx.Config{Dir: cfg.Path, Env: cfg.Env, Timeout: cfg.Timeout, WaitDelay: cfg.WaitDelay,
		MaxStderr: cfg.MaxStderr, MaxStdout: cfg.MaxStdout})
}

// RunInput serves the capture of the command as Run does; the input is
// not part of the match (a capture cannot tell scripts apart).
func (f *FixtureRunner) RunInput(ctx context.Context, _ []byte, name string, args ...string) (Result, error) {
	return f.Run(ctx, name, args...)
}

var _ InputRunner = (*FixtureRunner)(nil)

// BatchConfig names the batch commands (defaults "qsub", "qdel",
// "qstat", "qhold", "qrls": looked up by the runner) and the site, for error messages.
// Server, when set, is the pbs_server ("host" or "host:port", the
// agent's torque.server) every command goes to: qsub's destination
// (`-q [queue]@server`), qstat's (`@server`) and qdel's job id
// (`id@server`); empty, the clients' default (<pbs_home>/server_name).
type BatchConfig struct {
	Site              string
	Qsub, Qdel, Qstat string
	// Qhold and Qrls put and release operator holds (defaults "qhold",
	// "qrls"; hold.go).
	Qhold, Qrls string
	Server      string
}

// Batch submits, lists and deletes jobs with qsub, qstat and qdel: each
// call runs one command and parses its output. Every method returns the
// argument vector it ran (for the audit), also on failure. Safe for
// concurrent use if its runner is.
type Batch struct {
	run InputRunner
	cfg BatchConfig
}

// NewBatch returns a Batch running commands through r.
func NewBatch(r InputRunner, cfg BatchConfig) *Batch {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&cfg.Qsub, "qsub")
	def(&cfg.Qdel, "qdel")
	def(&cfg.Qstat, "qstat")
	def(&cfg.Qhold, "qhold")
	def(&cfg.Qrls, "qrls")
	def(&cfg.Site, "the local server")
	return &Batch{run: r, cfg: cfg}
}

// Submit runs qsub for spec with its script on standard input and returns
// the new job's id. A refusal by Torque is a *CommandError with qsub's
// stderr.
func (b *Batch) Submit(ctx context.Context, spec QsubSpec) (string, []string, error) {
	if b.cfg.Server != "" {
		spec.Server = b.cfg.Server
	}
	args, err := QsubArgs(spec)
	if err != nil {
		return "", nil, err
	}
	argv := append([]string{b.cfg.Qsub}, args...)
	res, err := b.run.RunInput(ctx, spec.Script, b.cfg.Qsub, args...)
	if err != nil {
		return "", argv, fmt.Errorf("qsub on %s: %w", b.cfg.Site, err)
	}
	if err := ClassifyExit("qsub", args, res); err != nil {
		return "", argv, fmt.Errorf("qsub on %s: %w", b.cfg.Site, err)
	}
	id, err := ParseQsubID(res.Stdout)
	if err != nil {
		return "", argv, fmt.Errorf("qsub on %s: %w", b.cfg.Site, err)
	}
	return id, argv, nil
}

// Jobs runs qstat -f -x and returns every job it lists, completed ones
// (kept for the server's keep_completed) included.
func (b *Batch) Jobs(ctx context.Context) ([]BatchJob, []string, error) {
	args := []string{"-f", "-x"}
	if b.cfg.Server != "" {
		args = append(args, "@"+b.cfg.Server)
	}
	argv := append([]string{b.cfg.Qstat}, args...)
	res, err := b.run.RunInput(ctx, nil, b.cfg.Qstat, args...)
	if err != nil {
		return nil, argv, fmt.Errorf("qstat on %s: %w", b.cfg.Site, err)
	}
	if err := ClassifyExit("qstat", args, res); err != nil {
		// A job that vanished between qstat's listing and its status
		// request makes qstat exit 153 after printing the others.
		if !errors.Is(err, ErrUnknownJob) || len(bytes.TrimSpace(res.Stdout)) == 0 {
			return nil, argv, fmt.Errorf("qstat on %s: %w", b.cfg.Site, err)
		}
	}
	jobs, err := ParseBatchJobs(bytes.NewReader(res.Stdout))
	if err != nil {
		return nil, argv, fmt.Errorf("qstat on %s: %w", b.cfg.Site, err)
	}
	return jobs, argv, nil
}

// Delete runs qdel on job id. A job Torque no longer knows wraps
// ErrUnknownJob and one that already completed ErrInvalidState: callers
// that want the job gone treat both as done.
func (b *Batch) Delete(ctx context.Context, id string) ([]string, error) {
	if !looksLikeJobID(id) {
		return nil, fmt.Errorf("qdel on %s: %w: job id %q", b.cfg.Site, ErrBadSpec, id)
	}
	target := id
	if b.cfg.Server != "" {
		target += "@" + b.cfg.Server
	}
	argv := []string{b.cfg.Qdel, target}
	res, err := b.run.RunInput(ctx, nil, b.cfg.Qdel, target)
	if err != nil {
		return argv, fmt.Errorf("qdel on %s: %w", b.cfg.Site, err)
	}
	if err := ClassifyExit("qdel", []string{target}, res); err != nil {
		return argv, fmt.Errorf("qdel on %s: %w", b.cfg.Site, err)
	}
	return argv, nil
}

// Gone reports whether a Delete error means there is nothing left to
// delete: the job is unknown or already completed.
func Gone(err error) bool {
	return err == nil || errors.Is(err, ErrUnknownJob) || errors.Is(err, ErrInvalidState)
}

package execx

import "context"

// InputRunner runs one command with the given bytes on its standard input
// (e.g. a job script for qsub), under the same rules as Runner: an
// argument vector, never a shell; a non-zero exit is in Result.
// Implementations are safe for concurrent use.
type InputRunner interface {
	RunInput(ctx context.Context, stdin []byte, name string, args ...string) (Result, error)
}

var _ InputRunner = runner{}

// RunInput runs name with args, stdin on its standard input (closed after
// the last byte, so the command sees end of file).
func (r runner) RunInput(ctx context.Context, stdin []byte, name string, args ...string) (Result, error) {
	if stdin == nil {
		stdin = []byte{}
	}
	return r.run(ctx, stdin, name, args)
}

// NewInput returns an InputRunner that executes commands with os/exec
// (the same runner as New).
func NewInput(cfg Config) InputRunner { return runner{cfg: cfg.withDefaults()} }

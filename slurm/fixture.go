package slurm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"lookahead/internal/execx"
)

// FixtureRunner answers with captured outputs instead of running Slurm:
// the first rule whose Argv is a prefix of the command line (name first)
// names the answer, <Dir>/<File> with its exit status in <Dir>/<base>.rc
// (the layout of testdata/, where stdout and stderr were captured
// together: the text is stdout for exit 0, stderr otherwise).
type FixtureRunner struct {
	Dir   string
	Rules []FixtureRule
}

// FixtureRule maps a command-line prefix to a captured answer.
type FixtureRule struct {
	Argv []string
	File string
}

var _ execx.Runner = (*FixtureRunner)(nil)

// Run implements execx.Runner.
func (f *FixtureRunner) Run(ctx context.Context, name string, args ...string) (execx.Result, error) {
	if err := ctx.Err(); err != nil {
		return execx.Result{ExitCode: -1}, err
	}
	argv := append([]string{name}, args...)
	for _, r := range f.Rules {
		if len(r.Argv) <= len(argv) && slices.Equal(r.Argv, argv[:len(r.Argv)]) {
			return f.load(r.File)
		}
	}
	return execx.Result{ExitCode: -1}, fmt.Errorf("fixture: no answer for %q", strings.Join(argv, " "))
}

func (f *FixtureRunner) load(file string) (execx.Result, error) {
	text, err := os.ReadFile(filepath.Join(f.Dir, file))
	if err != nil {
		return execx.Result{ExitCode: -1}, fmt.Errorf("fixture: %w", err)
	}
	rc, err := os.ReadFile(filepath.Join(f.Dir, strings.TrimSuffix(file, filepath.Ext(file))+".rc"))
	if err != nil {
		return execx.Result{ExitCode: -1}, fmt.Errorf("fixture: %w", err)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(rc)))
	if err != nil {
		return execx.Result{ExitCode: -1}, fmt.Errorf("fixture %s: exit status: %w", file, err)
	}
	if code == 0 {
		return execx.Result{Stdout: text}, nil
	}
	return execx.Result{Stderr: text, ExitCode: code}, nil
}

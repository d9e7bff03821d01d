package torque

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoFixture is wrapped when a FixtureRunner holds no capture for the
// command asked for.
var ErrNoFixture = errors.New("no captured output for command")

// FixtureRunner serves outputs captured from the real programs, laid out as
// in the project's fixtures: a directory with an INDEX.tsv whose rows are
// `name <TAB> exit-code <TAB> command line`, and `<name>.out` / `<name>.err`
// holding stdout and stderr byte for byte. A command is matched by its
// argument vector against the command line split on white space (the
// capture lost shell quoting). When several rows match, the last one at or
// before the point set with FixtureAt is served (by default the last row of
// the index: the final state). It is safe for concurrent use.
type FixtureRunner struct {
	dir     string
	rows    []fixtureRow
	aliases map[string]string
}

var _ Runner = (*FixtureRunner)(nil)

type fixtureRow struct {
	name string
	exit int
	argv string // fields joined by one space
}

// FixtureOption refines a FixtureRunner.
type FixtureOption func(*FixtureRunner) error

// FixtureAt restricts the runner to the rows up to and including the row
// called name: the cluster as it was at that point of the capture.
func FixtureAt(name string) FixtureOption {
	return func(f *FixtureRunner) error {
		for i, r := range f.rows {
			if r.name == name {
				f.rows = f.rows[:i+1]
				return nil
			}
		}
		return fmt.Errorf("fixture point %q: not in %s", name, filepath.Join(f.dir, "INDEX.tsv"))
	}
}

// FixtureAlias serves the command line want from the rows captured as
// have, e.g. "qstat -f -x -t" from "qstat -x -t" (qstat's -x implies -f).
// Use it only where the two are known to print the same; say why at the
// call site.
func FixtureAlias(want, have string) FixtureOption {
	return func(f *FixtureRunner) error {
		f.aliases[normArgv(strings.Fields(want))] = normArgv(strings.Fields(have))
		return nil
	}
}

// NewFixtureRunner reads dir/INDEX.tsv.
func NewFixtureRunner(dir string, opts ...FixtureOption) (*FixtureRunner, error) {
	rows, err := readIndex(filepath.Join(dir, "INDEX.tsv"))
	if err != nil {
		return nil, err
	}
	f := &FixtureRunner{dir: dir, rows: rows, aliases: map[string]string{}}
	for _, o := range opts {
		if err := o(f); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func readIndex(path string) ([]fixtureRow, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("fixture index: %w", err)
	}
	defer fh.Close()
	var rows []fixtureRow
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		parts := strings.SplitN(sc.Text(), "\t", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("fixture index %s line %d: want 3 tab-separated columns", path, n)
		}
		code, err := strconv.Atoi(parts[1])
		if err != nil {
			return nil, fmt.Errorf("fixture index %s line %d: exit code: %w", path, n, err)
		}
		rows = append(rows, fixtureRow{name: parts[0], exit: code, argv: normArgv(strings.Fields(parts[2]))})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fixture index %s: %w", path, err)
	}
	return rows, nil
}

func normArgv(argv []string) string { return strings.Join(argv, " ") }

// Run serves the captured stdout, stderr and exit code of the command.
func (f *FixtureRunner) Run(ctx context.Context, name string, args ...string) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	key := normArgv(append([]string{filepath.Base(name)}, args...))
	if alias, ok := f.aliases[key]; ok {
		key = alias
	}
	for i := len(f.rows) - 1; i >= 0; i-- {
		if r := f.rows[i]; r.argv == key {
			return f.load(r)
		}
	}
	return Result{}, fmt.Errorf("%s in %s: %w", key, f.dir, ErrNoFixture)
}

func (f *FixtureRunner) load(r fixtureRow) (Result, error) {
	out, err := os.ReadFile(filepath.Join(f.dir, r.name+".out"))
	if err != nil {
		return Result{}, fmt.Errorf("fixture %s: %w", r.name, err)
	}
	errOut, err := os.ReadFile(filepath.Join(f.dir, r.name+".err"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Result{}, fmt.Errorf("fixture %s: %w", r.name, err)
	}
	return Result{Stdout: out, Stderr: errOut, ExitCode: r.exit}, nil
}

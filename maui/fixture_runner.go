package maui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// fixtureRow is one captured command: its argv joined by single spaces as
// INDEX.tsv records it, and the files holding what it printed.
type fixtureRow struct {
	name     string
	exitCode int
	command  string
}

type fixtureRunner struct {
	dir  string
	mu   sync.Mutex
	rows map[string][]fixtureRow // by command line, in capture order
	next map[string]int
}

var _ Runner = (*fixtureRunner)(nil)

// ErrNoFixture is wrapped when a FixtureRunner has no capture for a command.
var ErrNoFixture = errors.New("no captured output for command")

// NewFixtureRunner serves captured outputs from dir, laid out as the
// torque-maui fixtures are: INDEX.tsv rows "name<TAB>exit<TAB>command line",
// <name>.out holding stdout and <name>.err stderr (absent when empty).
// A call matches a row when "name args..." joined by single spaces equals
// the recorded command line (quoting was lost at capture, so TASKS==2 is
// recorded bare). When one command line was captured several times, calls
// are served in capture order and the last capture repeats; this replays a
// stateful session such as setres followed by showres. Safe for concurrent
// use.
func NewFixtureRunner(dir string) (Runner, error) {
	f, err := os.Open(filepath.Join(dir, "INDEX.tsv"))
	if err != nil {
		return nil, fmt.Errorf("fixture runner: %w", err)
	}
	defer f.Close()
	fr := &fixtureRunner{dir: dir, rows: map[string][]fixtureRow{}, next: map[string]int{}}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		row, err := parseIndexRow(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("fixture runner: %s line %d: %w", f.Name(), line, err)
		}
		fr.rows[row.command] = append(fr.rows[row.command], row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fixture runner: read %s: %w", f.Name(), err)
	}
	return fr, nil
}

func parseIndexRow(s string) (fixtureRow, error) {
	parts := strings.SplitN(s, "\t", 3)
	if len(parts) != 3 {
		return fixtureRow{}, fmt.Errorf("want 3 tab-separated columns, got %d", len(parts))
	}
	code, err := strconv.Atoi(parts[1])
	if err != nil {
		return fixtureRow{}, fmt.Errorf("exit code %q: %w", parts[1], err)
	}
	return fixtureRow{name: parts[0], exitCode: code, command: parts[2]}, nil
}

// Run serves the next capture of the command. See NewFixtureRunner.
func (r *fixtureRunner) Run(ctx context.Context, name string, args ...string) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{ExitCode: -1}, err
	}
	line := strings.Join(append([]string{name}, args...), " ")
	r.mu.Lock()
	rows := r.rows[line]
	i := r.next[line]
	if i < len(rows)-1 {
		r.next[line] = i + 1
	}
	r.mu.Unlock()
	if len(rows) == 0 {
		return Result{ExitCode: -1}, fmt.Errorf("%w: %q in %s", ErrNoFixture, line, r.dir)
	}
	row := rows[i]
	out, err := os.ReadFile(filepath.Join(r.dir, row.name+".out"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Result{ExitCode: -1}, fmt.Errorf("fixture %s: %w", row.name, err)
	}
	errb, err := os.ReadFile(filepath.Join(r.dir, row.name+".err"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Result{ExitCode: -1}, fmt.Errorf("fixture %s: %w", row.name, err)
	}
	return Result{Stdout: out, Stderr: errb, ExitCode: row.exitCode}, nil
}

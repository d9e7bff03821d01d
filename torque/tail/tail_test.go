package tail

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// collector records what a tailer hands on, across restarts.
type collector struct {
	texts []string
	ids   []LineID
}

func (c *collector) handler(ctx context.Context, l Line) error {
	c.texts = append(c.texts, string(l.Text))
	c.ids = append(c.ids, l.ID)
	return nil
}

type env struct {
	t        *testing.T
	dir, pos string
	start    Start
	restart  bool
	// killMidPass stops every pass right after its first accepted line
	// and finishes it with a new tailer (restart in the middle of a pass).
	killMidPass bool
	tailer      *Tailer
	collected   collector
}

func newEnv(t *testing.T, restart bool) *env {
	dir := t.TempDir()
	logs := filepath.Join(dir, "server_logs")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, dir: logs, pos: filepath.Join(dir, "positions.json"), start: StartBeginning, restart: restart}
}

// sync runs one pass, with a fresh Tailer each time when restarting.
func (e *env) sync() {
	e.t.Helper()
	if e.tailer == nil || e.restart {
		if e.tailer != nil {
			e.tailer.closeAll()
		}
		tl, err := New(Config{Dir: e.dir, Positions: e.pos, Start: e.start}, e.collected.handler)
		if err != nil {
			e.t.Fatal(err)
		}
		e.tailer = tl
	}
	if e.killMidPass {
		e.killAfterFirstLine()
	}
	if err := e.tailer.Sync(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) killAfterFirstLine() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.tailer.handle = func(ctx context.Context, l Line) error {
		err := e.collected.handler(ctx, l)
		cancel()
		return err
	}
	if err := e.tailer.Sync(ctx); err != nil && !errors.Is(err, context.Canceled) {
		e.t.Fatal(err)
	}
	e.tailer.closeAll()
	tl, err := New(Config{Dir: e.dir, Positions: e.pos, Start: e.start}, e.collected.handler)
	if err != nil {
		e.t.Fatal(err)
	}
	e.tailer = tl
}

func (e *env) write(name, s string) {
	e.t.Helper()
	f, err := os.OpenFile(filepath.Join(e.dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) rename(from, to string) {
	e.t.Helper()
	if err := os.Rename(filepath.Join(e.dir, from), filepath.Join(e.dir, to)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) want(lines ...string) {
	e.t.Helper()
	if !slices.Equal(e.collected.texts, lines) {
		e.t.Fatalf("handed on %q\nwant       %q", e.collected.texts, lines)
	}
}

var scenarios = []struct {
	name string
	run  func(e *env)
}{
	{"append", func(e *env) {
		e.write("20261122", "a\nb\n")
		e.sync()
		e.write("20261122", "c\n")
		e.sync()
		e.want("a", "b", "c")
	}},
	{"partial line completed later", func(e *env) {
		e.write("20261122", "a\nb")
		e.sync()
		e.want("a")
		e.write("20261122", "c\n")
		e.sync()
		e.want("a", "bc")
	}},
	{"midnight with lines still arriving in the old file", func(e *env) {
		e.write("20261122", "d1-a\n")
		e.sync()
		e.write("20261123", "d2-a\n")
		e.write("20261122", "d1-late\n")
		e.sync()
		e.write("20261122", "d1-later\n")
		e.write("20261123", "d2-b\n")
		e.sync()
		e.want("d1-a", "d1-late", "d2-a", "d1-later", "d2-b")
	}},
	{"size roll to .1 and .2", func(e *env) {
		e.write("20261122", "a\n")
		e.sync()
		e.write("20261122", "b-unread\n")
		e.rename("20261122", "20261122.1")
		e.write("20261122", "c\n")
		e.sync()
		e.write("20261122", "d-unread")
		e.rename("20261122.1", "20261122.2")
		e.rename("20261122", "20261122.1")
		e.write("20261122.1", "\n")
		e.write("20261122", "e\n")
		e.sync()
		e.want("a", "b-unread", "c", "d-unread", "e")
	}},
	{"truncation", func(e *env) {
		e.write("20261122", "old-1\nold-2\n")
		e.sync()
		os.Truncate(filepath.Join(e.dir, "20261122"), 0)
		e.write("20261122", "new\n")
		e.sync()
		e.want("old-1", "old-2", "new")
	}},
	{"truncated and regrown past the offset", func(e *env) {
		e.write("20261122", "11/22 first\n")
		e.sync()
		os.Truncate(filepath.Join(e.dir, "20261122"), 0)
		e.write("20261122", "11/23 rewritten\n11/23 longer than before\n")
		e.sync()
		e.want("11/22 first", "11/23 rewritten", "11/23 longer than before")
	}},
	{"truncated and regrown with the same head", func(e *env) {
		// The first line is longer than the head the tailer compares
		// (headLen): only the size shows the truncation.
		head := "a first line longer than the 64 bytes the tailer compares as the head\n"
		e.write("20261122", head+"11/22 old-2\n11/22 old-3\n")
		e.sync()
		os.Truncate(filepath.Join(e.dir, "20261122"), 0)
		e.write("20261122", head+"11/22 new-2\n")
		e.sync()
		e.write("20261122", "11/22 new-3 grows the file past the old offset\n")
		e.sync()
		first := strings.TrimSuffix(head, "\n")
		e.want(first, "11/22 old-2", "11/22 old-3", first, "11/22 new-2", "11/22 new-3 grows the file past the old offset")
	}},
	{"rewritten in place to the same size", func(e *env) {
		e.write("20261122", "11/22 a\n")
		e.sync()
		os.WriteFile(filepath.Join(e.dir, "20261122"), []byte("11/23 b\n"), 0o644)
		e.sync()
		e.want("11/22 a", "11/23 b")
	}},
	{"deleted and recreated", func(e *env) {
		e.write("20261122", "a\n")
		e.sync()
		e.write("20261122", "b\n")
		os.Remove(filepath.Join(e.dir, "20261122"))
		e.write("20261122", "c\n")
		e.sync()
		if e.restart {
			// A stopped tailer holds no descriptor: what was appended to
			// the deleted file after the last pass is gone with it.
			e.want("a", "c")
			return
		}
		e.want("a", "b", "c")
	}},
	{"host suffix (log_file_suffix=%h) rolled", func(e *env) {
		e.write("20261122.vm", "a\n")
		e.sync()
		e.write("20261122.vm", "b\n")
		e.rename("20261122.vm", "20261122.vm.1")
		e.write("20261122.vm", "c\n")
		e.write("20261123.vm", "d\n")
		e.sync()
		e.want("a", "b", "c", "d")
	}},
	{"files that do not match are ignored", func(e *env) {
		e.write("20261122", "a\n")
		e.write("notes.txt", "x\n")
		e.write("20261122.1.gz", "y\n")
		e.write("20261121.gz", "y\n")
		e.write("2026112", "z\n")
		e.sync()
		e.want("a")
	}},
}

// Each scenario runs with one tailer, and again with a new tailer (a
// restart from the positions file) before every pass.
func TestScenarios(t *testing.T) {
	variants := []struct {
		name          string
		restart, kill bool
	}{{"", false, false}, {"/restart before every pass", true, false}, {"/killed mid-pass and restarted", false, true}}
	for _, sc := range scenarios {
		for _, v := range variants {
			t.Run(sc.name+v.name, func(t *testing.T) {
				e := newEnv(t, v.restart)
				e.killMidPass = v.kill
				sc.run(e)
				checkUniqueIDs(t, e.collected.ids)
			})
		}
	}
}

func checkUniqueIDs(t *testing.T, ids []LineID) {
	t.Helper()
	seen := map[LineID]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("LineID %v handed on twice", id)
		}
		seen[id] = true
	}
}

// Restart in the middle of a pass: the handler stops the tailer after two
// lines; the next tailer goes on from the third.
func TestRestartMidPass(t *testing.T) {
	e := newEnv(t, false)
	e.write("20261122", "a\nb\nc\nd\n")
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	tl, err := New(Config{Dir: e.dir, Positions: e.pos, Start: StartBeginning}, func(_ context.Context, l Line) error {
		e.collected.texts = append(e.collected.texts, string(l.Text))
		if n++; n == 2 {
			cancel() // accepted, then killed: must not be handed on again
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Sync(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	tl.closeAll()
	e.sync()
	e.want("a", "b", "c", "d")
}

func TestStartModes(t *testing.T) {
	t.Run("saved-or-end without positions skips existing lines", func(t *testing.T) {
		e := newEnv(t, true)
		e.start = StartSavedOrEnd
		e.write("20261122", "old\npartial")
		e.sync()
		e.write("20261122", "-done\nnew\n")
		e.write("20261123", "next day\n")
		e.sync()
		e.want("partial-done", "new", "next day")
	})
	t.Run("saved-or-end with positions reads files it never saw", func(t *testing.T) {
		e := newEnv(t, true)
		e.start = StartSavedOrEnd
		e.write("20261122", "old\n")
		e.sync()
		e.write("20261123", "while down\n")
		e.sync()
		e.want("while down")
	})
	t.Run("end ignores what happened while down", func(t *testing.T) {
		e := newEnv(t, true)
		e.start = StartEnd
		e.write("20261122", "old\n")
		e.sync()
		e.write("20261122", "while down\n")
		e.sync()
		e.want()
	})
	t.Run("beginning reads everything", func(t *testing.T) {
		e := newEnv(t, true)
		e.write("20261122", "old\n")
		e.sync()
		e.want("old")
	})
}

func TestLongLineSkipped(t *testing.T) {
	e := newEnv(t, false)
	e.write("20261122", "a\n"+strings.Repeat("x", 300<<10)+"\nb\n")
	tl, err := New(Config{Dir: e.dir, Positions: e.pos, Start: StartBeginning, MaxLine: 100 << 10}, e.collected.handler)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.want("a", "b")
	if tl.Stats().LongLines.Load() != 1 {
		t.Fatalf("long lines %d", tl.Stats().LongLines.Load())
	}
}

// Run wires fsnotify and the ticker: lines written while it runs arrive.
func TestRunFollows(t *testing.T) {
	e := newEnv(t, false)
	got := make(chan string, 10)
	tl, err := New(Config{Dir: e.dir, Positions: e.pos, Start: StartBeginning, PollInterval: 50 * time.Millisecond},
		func(_ context.Context, l Line) error { got <- string(l.Text); return nil })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tl.Run(ctx) }()
	e.write("20261122", "one\n")
	e.write("20261122", "two\n")
	for _, want := range []string{"one", "two"} {
		select {
		case g := <-got:
			if g != want {
				t.Fatalf("got %q, want %q", g, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %q", want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

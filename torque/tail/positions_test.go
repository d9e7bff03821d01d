package tail

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// An unusable positions file (corrupt, or of another version) no longer
// stops the tailer: it is kept aside, the caller is told, and reading
// starts as without one — with StartSavedOrEnd, from the end.
func TestUnusablePositionsKeptAside(t *testing.T) {
	for _, c := range []struct{ name, content string }{
		{"cut mid-write", `{"version":1,"files":[{"key":"1:2:0","pa`},
		{"not JSON", "\x00\x00\x00\x00"},
		{"another version", `{"version":2,"files":[]}`},
		{"a bad entry", `{"version":1,"files":[{"key":"k","offset":-5,"dev_ino":"1:2"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, false)
			e.start = StartSavedOrEnd
			e.write("20261122", "before-1\nbefore-2\n")
			if err := os.WriteFile(e.pos, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			var kept string
			var told error
			tl, err := New(Config{Dir: e.dir, Positions: e.pos, Start: e.start,
				OnPositionsReset: func(k string, err error) { kept, told = k, err }}, e.collected.handler)
			if err != nil {
				t.Fatalf("New refused to start: %v", err)
			}
			e.tailer = tl
			if kept != e.pos+".bad" || !errors.Is(told, errUnusable) {
				t.Fatalf("told kept=%q err=%v", kept, told)
			}
			if b, err := os.ReadFile(kept); err != nil || string(b) != c.content {
				t.Fatalf("kept file: %q, %v", b, err)
			}
			e.sync()
			e.write("20261122", "after\n")
			e.sync()
			e.want("after")
		})
	}
}

// A positions file that cannot be read at all (here: a directory) is
// still an error: nothing is renamed.
func TestUnreadablePositionsFail(t *testing.T) {
	e := newEnv(t, false)
	if err := os.Mkdir(e.pos, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Dir: e.dir, Positions: e.pos}, e.collected.handler); err == nil || errors.Is(err, errUnusable) {
		t.Fatalf("New: %v, want a read error", err)
	}
	if _, err := os.Stat(e.pos + ".bad"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a directory was set aside: %v", err)
	}
}

// The positions file is its owner's only, also when an older one (or a
// temporary file left by a crash) was readable by others.
func TestPositionsWrittenOwnerOnly(t *testing.T) {
	e := newEnv(t, false)
	if err := os.WriteFile(e.pos, []byte(`{"version":1,"files":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.pos+".tmp", []byte("left by a crash"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write("20261122", "a\n")
	e.sync()
	fi, err := os.Stat(e.pos)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Fatalf("positions file mode %o, want 600", m)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.pos), "positions.json.tmp")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary file left: %v", err)
	}
}

package tail

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rollBetweenListAndStat makes pbs_server's log_roll (F → F.1, a new F)
// happen inside the tailer's next listing, after the directory was read
// and before its entries are stat'ed: that listing sees the new F only,
// and the old inode is missing from it once.
func rollBetweenListAndStat(e *env, tl *Tailer, appendOld, newLive string) {
	tl.afterReadDir = func() {
		tl.afterReadDir = nil
		if appendOld != "" {
			e.write("20261124", appendOld)
		}
		e.rename("20261124", "20261124.1")
		e.write("20261124", newLive)
	}
}

// TestRollRaceKeepsPosition: a file missing from one listing keeps its
// position; when its inode reappears under its rolled name nothing is
// handed on twice and nothing is lost.
func TestRollRaceKeepsPosition(t *testing.T) {
	for _, c := range []struct {
		name      string
		keepOpen  int
		appendOld string
	}{
		{"open descriptor", 4, ""},
		{"open descriptor, lines appended before the roll", 4, "a3\n"},
		{"closed descriptor", 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, false)
			e.write("20261123", "d1\n") // older file: with KeepOpen 1 the live file's descriptor is the one kept
			e.write("20261124", "a1\na2\n")
			tl, err := New(Config{Dir: e.dir, Positions: e.pos, Start: StartBeginning, KeepOpen: c.keepOpen}, e.collected.handler)
			if err != nil {
				t.Fatal(err)
			}
			e.tailer = tl
			e.sync()
			if c.keepOpen == 1 {
				tl.files[devInoOf(t, e, "20261124")].close()
			}
			rollBetweenListAndStat(e, tl, c.appendOld, "b1\n")
			e.sync() // the race pass
			e.sync() // 20261124.1 listed again
			e.write("20261124.1", "a4\n")
			e.sync()
			want := []string{"d1", "a1", "a2"}
			if c.appendOld != "" {
				want = append(want, "a3")
			}
			want = append(want, "b1", "a4")
			e.want(want...)
		})
	}
}

// TestRollRaceAfterRestart: a restarted tailer whose first listing misses
// a file of its positions file keeps that position for when it reappears.
func TestRollRaceAfterRestart(t *testing.T) {
	e := newEnv(t, true)
	e.write("20261124", "a1\na2\n")
	e.sync()
	tl, err := New(Config{Dir: e.dir, Positions: e.pos, Start: StartSavedOrEnd}, e.collected.handler)
	if err != nil {
		t.Fatal(err)
	}
	rollBetweenListAndStat(e, tl, "", "b1\n")
	if err := tl.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.restart = false
	e.tailer = tl
	e.write("20261124.1", "a3\n")
	e.sync()
	e.want("a1", "a2", "b1", "a3")
}

// TestForgottenAfterMisses: a file gone for good is forgotten after
// forgetAfter listings, in memory and in the positions file.
func TestForgottenAfterMisses(t *testing.T) {
	e := newEnv(t, false)
	e.write("20261124", "a1\n")
	e.sync()
	if err := os.Remove(filepath.Join(e.dir, "20261124")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < forgetAfter; i++ {
		e.sync()
	}
	data, err := os.ReadFile(e.pos)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.tailer.files)+len(e.tailer.saved) != 0 || strings.Contains(string(data), "20261124") {
		t.Fatalf("still remembered: files %v saved %v, positions %s", e.tailer.files, e.tailer.saved, data)
	}
}

func devInoOf(t *testing.T, e *env, name string) string {
	t.Helper()
	fi, err := os.Stat(filepath.Join(e.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return devIno(fi)
}

// TestMaxLineInOneRead: a line longer than MaxLine that arrives whole in
// one read (shorter than the read chunk) is skipped and counted too.
func TestMaxLineInOneRead(t *testing.T) {
	e := newEnv(t, false)
	e.write("20261124", "a\n"+strings.Repeat("x", 50)+"\nb\n"+strings.Repeat("y", 11)+"\n"+strings.Repeat("z", 10)+"\n")
	tl, err := New(Config{Dir: e.dir, Positions: e.pos, Start: StartBeginning, MaxLine: 10}, e.collected.handler)
	if err != nil {
		t.Fatal(err)
	}
	e.tailer = tl
	e.sync()
	e.want("a", "b", strings.Repeat("z", 10))
	if n := tl.Stats().LongLines.Load(); n != 2 {
		t.Fatalf("long lines %d, want 2", n)
	}
	e.write("20261124", "c\n")
	e.sync()
	e.want("a", "b", strings.Repeat("z", 10), "c")
}

package tail

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// model is the writer: it appends numbered records to Torque-like day files,
// rolls them by size, switches day while still writing late lines into the
// previous day, and writes partial lines it completes later. It remembers
// in which physical file (fileNo) each record went.
type model struct {
	t        *testing.T
	rng      *rand.Rand
	dir      string
	day      int
	next     int            // next record number
	fileOf   map[int]int    // record -> physical file number
	liveNo   map[int]int    // day -> physical file number of its live file
	rolls    map[int]int    // day -> how many rolled pieces exist
	partial  map[int]string // day -> written first half of a record
	fileSeq  int
	lateDays int
}

func (m *model) name(day int) string { return strconv.Itoa(20261101 + day) }

func (m *model) appendRaw(day int, s string) {
	f, err := os.OpenFile(filepath.Join(m.dir, m.name(day)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		m.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		m.t.Fatal(err)
	}
}

func (m *model) live(day int) int {
	if _, ok := m.liveNo[day]; !ok {
		m.fileSeq++
		m.liveNo[day] = m.fileSeq
	}
	return m.liveNo[day]
}

// complete writes the missing half of day's pending line, if any.
func (m *model) complete(day int) {
	if p, ok := m.partial[day]; ok {
		m.appendRaw(day, p[len(p)/2:]+"\n")
		delete(m.partial, day)
	}
}

func (m *model) record(day int) {
	m.complete(day)
	rec := fmt.Sprintf("rec-%06d day=%d payload=%s", m.next, day, strings.Repeat("x", m.rng.IntN(40)))
	m.fileOf[m.next] = m.live(day)
	m.next++
	if m.rng.IntN(5) == 0 { // half now, half at the next write to this day
		m.appendRaw(day, rec[:len(rec)/2])
		m.partial[day] = rec
		return
	}
	m.appendRaw(day, rec+"\n")
}

// roll renames day.(n) -> day.(n+1) ... live -> day.1, as Torque's size
// rolling does. A pending half line is completed first (Torque writes
// whole lines).
func (m *model) roll(day int) {
	if _, ok := m.liveNo[day]; !ok {
		return
	}
	m.complete(day)
	for n := m.rolls[day]; n >= 1; n-- {
		m.mv(fmt.Sprintf("%s.%d", m.name(day), n), fmt.Sprintf("%s.%d", m.name(day), n+1))
	}
	m.mv(m.name(day), m.name(day)+".1")
	m.rolls[day]++
	delete(m.liveNo, day)
}

func (m *model) mv(a, b string) {
	if err := os.Rename(filepath.Join(m.dir, a), filepath.Join(m.dir, b)); err != nil {
		m.t.Fatal(err)
	}
}

// step makes one random change.
func (m *model) step() {
	switch r := m.rng.IntN(100); {
	case r < 60:
		for range 1 + m.rng.IntN(4) {
			m.record(m.day)
		}
	case r < 72 && m.day > 0: // late line in yesterday's file
		if _, ok := m.liveNo[m.day-1]; ok {
			m.record(m.day - 1)
			m.lateDays++
		}
	case r < 85:
		m.roll(m.day)
	case r < 92:
		if m.day > 0 {
			m.complete(m.day - 1) // yesterday's half line gets its end
		}
		m.day++
	}
}

// finish completes every half-written line.
func (m *model) finish() {
	for day := range m.partial {
		m.complete(day)
	}
}

var extraSeeds = flag.Int("prop.seeds", 0, "run the kill/restart property test with this many more seeds")

type delivered struct {
	rec int
	id  LineID
}

// TestKillRestartProperty runs the writer against a tailer that is killed
// at random points and restarted from its positions file at least 100
// times per seed. Kills are: cancellation before a line is accepted,
// cancellation right after it was accepted, and a simulated hard crash
// between acceptance and the positions write. Property: after dropping
// redelivered LineIDs, the delivered records are exactly the written ones
// (less those the handler skips), each once, in write order within each
// physical file; and the only raw duplicates are the one line per hard
// crash on a line that was acted on.
func TestKillRestartProperty(t *testing.T) {
	seeds := []uint64{1, 2026}
	for i := range *extraSeeds {
		seeds = append(seeds, uint64(1000+i))
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { runKillRestart(t, seed) })
	}
}

func runKillRestart(t *testing.T, seed uint64) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	m := &model{t: t, rng: rng, dir: logs, fileOf: map[int]int{}, liveNo: map[int]int{},
		rolls: map[int]int{}, partial: map[int]string{}}
	var got []delivered
	restarts, crashes := 0, 0
	var tl *Tailer
	for step := 0; restarts < 120 || step < 600; step++ {
		if step > 20000 {
			t.Fatalf("only %d restarts", restarts)
		}
		m.step()
		if rng.IntN(3) != 0 {
			continue
		}
		if tl == nil {
			tl = newPropTailer(t, logs, dir, &got)
		}
		killed, crashed := runPass(t, rng, tl, &got)
		if killed {
			tl.closeAll()
			tl = nil
			restarts++
			if crashed {
				crashes++
			}
		}
	}
	m.finish()
	if tl == nil {
		tl = newPropTailer(t, logs, dir, &got)
	}
	if err := tl.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkDelivered(t, m, got, crashes)
	t.Logf("seed %d: %d records, %d restarts (%d hard crashes), %d late lines, %d files",
		seed, m.next, restarts, crashes, m.lateDays, m.fileSeq)
}

func newPropTailer(t *testing.T, logs, dir string, got *[]delivered) *Tailer {
	tl, err := New(Config{Dir: logs, Positions: filepath.Join(dir, "pos.json"), Start: StartBeginning}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl.handle = func(_ context.Context, l Line) error {
		rec := recNo(t, l.Text)
		if skipped(rec) {
			return Skip
		}
		*got = append(*got, delivered{rec: rec, id: l.ID})
		return nil
	}
	return tl
}

// runPass runs one pass of tl, killing it at a random line in one of the
// three ways, or not at all.
func runPass(t *testing.T, rng *rand.Rand, tl *Tailer, got *[]delivered) (killed, crashed bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mode, at, n := rng.IntN(4), 1+rng.IntN(6), 0
	atSkipped := false
	inner := tl.handle
	tl.handle = func(ctx context.Context, l Line) error {
		n++
		if n == at {
			atSkipped = skipped(recNo(t, l.Text))
		}
		if n == at && mode == 1 { // killed before the line is accepted
			cancel()
			return ctx.Err()
		}
		if err := inner(ctx, l); err != nil && !errors.Is(err, Skip) {
			return err
		} else if err != nil {
			if n == at && mode == 2 {
				cancel()
			}
			return err
		}
		if n == at && mode == 2 { // killed right after it was accepted
			cancel()
		}
		return nil
	}
	tl.crash = func(string) bool { return mode == 3 && n == at }
	err := tl.Sync(ctx)
	tl.handle, tl.crash = inner, nil
	switch {
	case err == nil:
		return false, false
	case errors.Is(err, errCrash):
		return true, !atSkipped // a skipped line handed on again is invisible
	case errors.Is(err, context.Canceled):
		return true, false
	}
	t.Fatal(err)
	return false, false
}

// skipped says which records the handler reads but does not act on
// (returns Skip): their offsets are recorded lazily.
func skipped(rec int) bool { return rec%3 == 0 }

func recNo(t *testing.T, text []byte) int {
	s, _, _ := strings.Cut(string(text), " ")
	n, err := strconv.Atoi(strings.TrimPrefix(s, "rec-"))
	if err != nil || !strings.HasPrefix(s, "rec-") {
		t.Fatalf("handed on a broken line %q", text)
	}
	return n
}

func checkDelivered(t *testing.T, m *model, got []delivered, crashes int) {
	t.Helper()
	seenID := map[LineID]int{}
	seenRec := map[int]bool{}
	lastInFile := map[int]int{}
	dups := 0
	for _, d := range got {
		if rec, ok := seenID[d.id]; ok {
			if rec != d.rec {
				t.Fatalf("LineID %v named record %d and %d", d.id, rec, d.rec)
			}
			dups++
			continue
		}
		seenID[d.id] = d.rec
		if seenRec[d.rec] {
			t.Fatalf("record %d handed on twice under different LineIDs", d.rec)
		}
		seenRec[d.rec] = true
		f := m.fileOf[d.rec]
		if last, ok := lastInFile[f]; ok && d.rec < last {
			t.Fatalf("file %d: record %d after %d", f, d.rec, last)
		}
		lastInFile[f] = d.rec
	}
	for i := 0; i < m.next; i++ {
		if skipped(i) {
			if seenRec[i] {
				t.Fatalf("skipped record %d delivered", i)
			}
			continue
		}
		if !seenRec[i] {
			t.Fatalf("record %d of %d lost", i, m.next)
		}
	}
	if dups != crashes {
		t.Fatalf("%d redelivered lines, want exactly one per hard crash (%d)", dups, crashes)
	}
}

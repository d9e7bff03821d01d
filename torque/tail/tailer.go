package tail

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Start says where reading begins.
type Start int

const (
	// StartSavedOrEnd resumes from the positions file. Without a
	// positions file, every file present at the first pass is skipped to
	// its last complete line; files that appear later are read from their
	// start. With one, files it does not list are new and read from the
	// start. The default.
	StartSavedOrEnd Start = iota
	// StartBeginning resumes from the positions file; files it does not
	// list (or every file, without one) are read from their start.
	StartBeginning
	// StartEnd ignores saved positions: at the first pass every file is
	// skipped to its last complete line (what happened while the tailer
	// was down is not read).
	StartEnd
)

// ParseStart reads "beginning", "end" or "saved-or-end".
func ParseStart(s string) (Start, error) {
	switch s {
	case "saved-or-end", "":
		return StartSavedOrEnd, nil
	case "beginning":
		return StartBeginning, nil
	case "end":
		return StartEnd, nil
	}
	return 0, fmt.Errorf("tail start %q: want beginning, end or saved-or-end", s)
}

// DayFiles matches Torque's log names: YYYYMMDD, or YYYYMMDD.<suffix> when
// the server's log_file_suffix is set (e.g. the host name), each optionally
// rolled by size to .1, .2, … (log_roll renames F.1 to F.2 and F to F.1).
var DayFiles = regexp.MustCompile(`^[0-9]{8}(\.[A-Za-z][A-Za-z0-9_-]*)?(\.[0-9]+)?$`)

// Config configures a Tailer.
type Config struct {
	// Dir is the directory to follow (e.g. $PBS_HOME/server_logs).
	Dir string
	// Match selects file names in Dir (default DayFiles).
	Match *regexp.Regexp
	// Positions is the positions file (required). One Tailer per file.
	Positions string
	Start     Start
	// PollInterval is the period of the reconcile (default 1 s).
	PollInterval time.Duration
	// CommitEvery writes the positions file after this many handled lines
	// (default 1), and always at the end of a pass and when Run returns.
	CommitEvery int
	// Sync fsyncs the positions file and its directory on each write
	// (survives power loss, costs a disk flush per write).
	Sync bool
	// MaxLine is the longest line handed on (default 1 MiB); longer lines
	// are skipped and counted.
	MaxLine int
	// KeepOpen is how many of the newest files keep their descriptor open
	// between passes (default 4), so a file deleted or renamed away can
	// still be drained.
	KeepOpen int
	// OnPositionsReset, when set, is told that the positions file could
	// not be used (corrupt, or written by another version: err says which)
	// and was renamed to keptAs; reading then starts as without a
	// positions file (with StartSavedOrEnd: from the end). A positions
	// file that cannot be read at all still makes New fail.
	OnPositionsReset func(keptAs string, err error)
}

func (c Config) withDefaults() (Config, error) {
	if c.Dir == "" || c.Positions == "" {
		return c, errors.New("tail: Dir and Positions are required")
	}
	if c.Match == nil {
		c.Match = DayFiles
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.CommitEvery <= 0 {
		c.CommitEvery = 1
	}
	if c.MaxLine <= 0 {
		c.MaxLine = 1 << 20
	}
	if c.KeepOpen <= 0 {
		c.KeepOpen = 4
	}
	return c, nil
}

// LineID names a line for good: File is the file's key (device, inode and
// a generation bumped when its content is replaced in place) and Offset
// the line's first byte.
type LineID struct {
	File   string
	Offset int64
}

// Line is one complete line, without its newline.
type Line struct {
	ID   LineID
	Path string // where the file was when the line was read
	Text []byte // valid only during the Handler call
}

// Handler is handed each line in file order. Returning nil marks the line
// handled: its end is then recorded (the positions file is written once
// CommitEvery handled lines are pending). Returning Skip marks it handled
// without effect (a line that carries nothing): its end is recorded with
// the next write, so a crash may hand it on again, which is harmless.
// Returning another error stops Run with it; the line will be handed on
// again.
type Handler func(ctx context.Context, l Line) error

// Skip is returned by a Handler for a line it read but did not act on.
//
//lint:ignore ST1012 a verdict like filepath.SkipDir, not a failure
var Skip = errors.New("tail: line skipped")

// Stats are counters, safe to read while Run runs.
type Stats struct {
	Lines, Bytes, LongLines   atomic.Int64
	Skipped                   atomic.Int64
	Truncations, Replaced     atomic.Int64
	Passes, PositionWrites    atomic.Int64
	NotifyErrors, OpenErrors  atomic.Int64
	FilesTracked, FilesClosed atomic.Int64
}

// Tailer follows one directory. Run and Sync must not be called
// concurrently; Stats may be read at any time.
type Tailer struct {
	cfg          Config
	handle       Handler
	files        map[string]*tracked // by dev:ino
	saved        map[string]position // by dev:ino: not followed now (not reached yet, or missing from a listing)
	missed       map[string]int      // consecutive listings a saved file was missing from
	hadPositions bool
	firstPass    bool
	pending      int
	dirty        bool
	stats        Stats
	// crash, set by tests, simulates a hard crash at a named point: when
	// it returns true, the pass returns errCrash without writing positions.
	crash func(point string) bool
	// afterReadDir, set by tests, runs between the directory read and the
	// stat of its entries (where a rename can slip in).
	afterReadDir func()
}

// forgetAfter is how many consecutive listings a file's position outlives
// the file: a file missing from fewer is taken to be in the middle of a
// rename, not gone. A reused inode is caught by the head check.
const forgetAfter = 3

var errCrash = errors.New("simulated crash")

// New loads the positions file and returns a Tailer handing lines to h.
func New(cfg Config, h Handler) (*Tailer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	saved, found, err := loadPositions(cfg.Positions)
	if errors.Is(err, errUnusable) {
		kept, aerr := setAside(cfg.Positions)
		if aerr != nil {
			return nil, errors.Join(err, aerr)
		}
		if cfg.OnPositionsReset != nil {
			cfg.OnPositionsReset(kept, err)
		}
		saved, found, err = map[string]position{}, false, nil
	}
	if err != nil {
		return nil, err
	}
	t := &Tailer{cfg: cfg, handle: h, files: map[string]*tracked{}, saved: saved, missed: map[string]int{},
		hadPositions: found, firstPass: true}
	if cfg.Start == StartEnd {
		t.saved = map[string]position{}
	}
	return t, nil
}

// Stats returns the tailer's counters.
func (t *Tailer) Stats() *Stats { return &t.stats }

// Run follows the directory until ctx is done (then it returns nil after
// recording what was handled) or the handler or the file system fails.
func (t *Tailer) Run(ctx context.Context) error {
	defer t.closeAll()
	hints := t.watch()
	if hints.w != nil {
		defer hints.w.Close()
	}
	tick := time.NewTicker(t.cfg.PollInterval)
	defer tick.Stop()
	for {
		if err := t.Sync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-hints.events:
			hints.drain()
		case <-hints.errors:
			t.stats.NotifyErrors.Add(1)
		}
	}
}

// hints wraps fsnotify; with no watcher the channels are nil and only the
// ticker wakes Run.
type hints struct {
	w      *fsnotify.Watcher
	events <-chan fsnotify.Event
	errors <-chan error
}

func (t *Tailer) watch() hints {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.stats.NotifyErrors.Add(1)
		return hints{}
	}
	if err := w.Add(t.cfg.Dir); err != nil {
		t.stats.NotifyErrors.Add(1)
		w.Close()
		return hints{}
	}
	return hints{w: w, events: w.Events, errors: w.Errors}
}

// drain swallows hints already queued: one pass covers them all.
func (h hints) drain() {
	for {
		select {
		case <-h.events:
		default:
			return
		}
	}
}

// Sync makes one reconcile pass: every file of the directory (and every
// file that vanished from it while open) is read to its last complete
// line. It records handled lines before returning, also on error.
func (t *Tailer) Sync(ctx context.Context) (err error) {
	t.stats.Passes.Add(1)
	defer func() {
		if errors.Is(err, errCrash) {
			return // a crash writes nothing
		}
		if serr := t.commit(true); serr != nil && err == nil {
			err = serr
		}
	}()
	listed, err := t.list()
	if err != nil {
		return err
	}
	t.forgetGone(listed)
	if err := t.drainVanished(ctx, listed); err != nil {
		return err
	}
	for _, e := range listed {
		if err := t.follow(ctx, e); err != nil {
			return err
		}
	}
	t.firstPass = false
	t.closeIdle(listed)
	return nil
}

// commit writes the positions file if anything changed (force) or if
// CommitEvery handled lines are pending.
func (t *Tailer) commit(force bool) error {
	if !t.dirty || (!force && t.pending < t.cfg.CommitEvery) {
		return nil
	}
	pos := make(map[string]position, len(t.files)+len(t.saved))
	for k, p := range t.saved { // not reached yet in this process
		pos[k] = p
	}
	for k, tr := range t.files {
		pos[k] = tr.pos
	}
	if err := savePositions(t.cfg.Positions, pos, t.cfg.Sync); err != nil {
		return err
	}
	t.stats.PositionWrites.Add(1)
	t.pending, t.dirty = 0, false
	return nil
}

func (t *Tailer) closeAll() {
	for _, tr := range t.files {
		tr.close()
	}
}

// forgetGone drops the saved positions of files missing from forgetAfter
// consecutive listings.
func (t *Tailer) forgetGone(listed []entry) {
	if len(t.saved) == 0 {
		return
	}
	present := make(map[string]bool, len(listed))
	for _, e := range listed {
		present[e.devIno] = true
	}
	for k := range t.saved {
		if present[k] {
			delete(t.missed, k) // adopted by follow in this pass
			continue
		}
		if t.missed[k]++; t.missed[k] >= forgetAfter {
			delete(t.saved, k)
			delete(t.missed, k)
			t.dirty = true
		}
	}
}

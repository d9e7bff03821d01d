package torque

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"lookahead/torque/tail"
)

// LogKind says which of pbs_server's logs a Tailer follows.
type LogKind int

const (
	// ServerLog is $PBS_HOME/server_logs.
	ServerLog LogKind = iota
	// AccountingLog is $PBS_HOME/server_priv/accounting.
	AccountingLog
)

func (k LogKind) String() string {
	if k == AccountingLog {
		return SourceAccounting
	}
	return SourceServerLog
}

// LogDir is where pbs_server writes the log of kind k under pbsHome
// (e.g. /var/spool/torque).
func LogDir(pbsHome string, k LogKind) string {
	if k == AccountingLog {
		return filepath.Join(pbsHome, "server_priv", "accounting")
	}
	return filepath.Join(pbsHome, "server_logs")
}

// TailerConfig configures a Tailer.
type TailerConfig struct {
	Kind LogKind
	// Dir defaults to LogDir(PBSHome, Kind).
	Dir     string
	PBSHome string
	// Positions is the positions file (required, one per Tailer).
	Positions string
	Start     tail.Start
	// Location is the zone pbs_server writes its times in (the server's
	// local time; required: the files carry no zone).
	Location     *time.Location
	PollInterval time.Duration
	CommitEvery  int
	Sync         bool
	// OnReject, when set, is told about each line that does not parse;
	// the line is counted and skipped either way.
	OnReject func(path string, offset int64, line string, err error)
	// OnPositionsReset, when set, is told that the positions file was
	// unusable and kept aside as keptAs (tail.Config.OnPositionsReset).
	OnPositionsReset func(keptAs string, err error)
}

// Tailer follows server_logs or accounting and hands each event on. Every
// line is handled once it has been parsed: a line that does not parse is
// counted and skipped, a line that carries no event is skipped; the line's
// end is recorded only after the Handler returned nil for its event.
type Tailer struct {
	cfg      TailerConfig
	handle   Handler
	tail     *tail.Tailer
	rejected atomic.Int64
	events   atomic.Int64
}

// NewTailer loads the positions file and returns a Tailer.
func NewTailer(cfg TailerConfig, h Handler) (*Tailer, error) {
	if cfg.Location == nil {
		return nil, errors.New("torque tailer: Location is required (log times carry no zone)")
	}
	if cfg.Dir == "" {
		if cfg.PBSHome == "" {
			return nil, errors.New("torque tailer: Dir or PBSHome is required")
		}
		cfg.Dir = LogDir(cfg.PBSHome, cfg.Kind)
	}
	t := &Tailer{cfg: cfg, handle: h}
	tl, err := tail.New(tail.Config{Dir: cfg.Dir, Positions: cfg.Positions, Start: cfg.Start,
		PollInterval: cfg.PollInterval, CommitEvery: cfg.CommitEvery, Sync: cfg.Sync,
		OnPositionsReset: cfg.OnPositionsReset}, t.line)
	if err != nil {
		return nil, fmt.Errorf("torque %s tailer: %w", cfg.Kind, err)
	}
	t.tail = tl
	return t, nil
}

// Run follows the directory until ctx is done (returns nil) or the handler
// fails (returns its error; the line is handed on again after a restart).
func (t *Tailer) Run(ctx context.Context) error {
	if err := t.tail.Run(ctx); err != nil {
		return fmt.Errorf("torque %s tailer: %w", t.cfg.Kind, err)
	}
	return nil
}

// Sync reads everything available now (one reconcile pass).
func (t *Tailer) Sync(ctx context.Context) error { return t.tail.Sync(ctx) }

// Rejected counts lines that did not parse; Events counts events handed on.
func (t *Tailer) Rejected() int64 { return t.rejected.Load() }

// Events counts the events handed on and accepted.
func (t *Tailer) Events() int64 { return t.events.Load() }

// Stats are the underlying tailer's counters.
func (t *Tailer) Stats() *tail.Stats { return t.tail.Stats() }

func (t *Tailer) line(ctx context.Context, l tail.Line) error {
	ev, ok, err := t.parse(string(l.Text))
	if err != nil {
		t.rejected.Add(1)
		if t.cfg.OnReject != nil {
			t.cfg.OnReject(l.Path, l.ID.Offset, string(l.Text), err)
		}
		return tail.Skip
	}
	if !ok {
		return tail.Skip
	}
	ev.Record = RecordID{File: l.ID.File, Offset: l.ID.Offset}
	if err := t.handle(ctx, ev); err != nil {
		return err
	}
	t.events.Add(1)
	return nil
}

func (t *Tailer) parse(line string) (Event, bool, error) {
	if t.cfg.Kind == AccountingLog {
		rec, err := ParseAcctLine(line, t.cfg.Location)
		if err != nil {
			return Event{}, false, err
		}
		return AcctEvent(rec), true, nil
	}
	rec, err := ParseLogLine(line, t.cfg.Location)
	if err != nil {
		return Event{}, false, err
	}
	ev, ok := LogEvent(rec)
	return ev, ok, nil
}

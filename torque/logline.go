package torque

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LogFormat is the server_logs line format, detected per line.
type LogFormat int

// The three captured formats.
const (
	FormatUnknown LogFormat = iota
	// Format25: Torque 2.5 — "MM/DD/YYYY HH:MM:SS;hex4;daemon;..." with
	// no PID/thread id after the daemon name.
	Format25
	// Format42: Torque 4.2 — as 2.5 with "daemon.threadid".
	Format42
	// Format61: Torque 6.1 — milliseconds and a decimal event type.
	Format61
)

func (f LogFormat) String() string {
	switch f {
	case Format25:
		return "torque-2.5"
	case Format42:
		return "torque-4.2"
	case Format61:
		return "torque-6.1"
	}
	return "unknown"
}

// LogRecord is one line of a pbs_server (or pbs_mom) log.
type LogRecord struct {
	Time      time.Time // UTC
	Format    LogFormat
	EventType int    // the log_events bit(s) of the line
	Daemon    string // "PBS_Server", "pbs_mom" (padding removed)
	Thread    int    // thread or process id (4.2, 6.1); 0 in 2.5
	Class     string // Svr, Que, Job, Req, Act, node, n/a
	Object    string
	Message   string
	// Continued marks a line whose message goes on from the previous line:
	// Torque's log_record writes each newline-separated piece of a message
	// as its own line, the later ones starting with "[continued]". The
	// marker is removed from Message.
	Continued bool
}

// ErrBadLine is wrapped by every parse error of a log or accounting line.
var ErrBadLine = errors.New("malformed line")

const continuedMark = "[continued]"

// ParseLogLine parses one server_logs line (without its newline). Times
// carry no zone in the file: they are read in loc and returned in UTC.
func ParseLogLine(line string, loc *time.Location) (LogRecord, error) {
	var f [6]string
	rest := line
	for i := 0; i < 5; i++ {
		j := strings.IndexByte(rest, ';')
		if j < 0 {
			return LogRecord{}, fmt.Errorf("%w: log line has %d of 6 fields", ErrBadLine, i+1)
		}
		f[i], rest = rest[:j], rest[j+1:]
	}
	f[5] = rest
	ts, millis, err := parseStamp(f[0], loc)
	if err != nil {
		return LogRecord{}, err
	}
	rec := LogRecord{Time: ts, Class: f[3], Object: f[4], Message: f[5]}
	if rec.EventType, err = parseEventType(f[1], millis); err != nil {
		return LogRecord{}, err
	}
	rec.Daemon, rec.Thread, rec.Format, err = parseDaemon(f[2], millis)
	if err != nil {
		return LogRecord{}, err
	}
	if m, ok := strings.CutPrefix(rec.Message, continuedMark); ok {
		rec.Message, rec.Continued = strings.TrimLeft(m, " "), true
	}
	return rec, nil
}

func parseEventType(s string, decimal bool) (int, error) {
	base := 16
	if decimal {
		base = 10
	}
	v, err := strconv.ParseUint(s, base, 16)
	if err != nil || s == "" {
		return 0, fmt.Errorf("%w: event type %q", ErrBadLine, s)
	}
	return int(v), nil
}

func parseDaemon(s string, millis bool) (name string, thread int, f LogFormat, err error) {
	s = strings.TrimLeft(s, " ")
	if s == "" {
		return "", 0, 0, fmt.Errorf("%w: empty daemon field", ErrBadLine)
	}
	name, tid, hasTID := strings.Cut(s, ".")
	switch {
	case millis:
		f = Format61
	case hasTID:
		f = Format42
	default:
		return name, 0, Format25, nil
	}
	if hasTID {
		if thread, err = strconv.Atoi(tid); err != nil {
			return "", 0, 0, fmt.Errorf("%w: daemon thread id %q", ErrBadLine, s)
		}
	}
	return name, thread, f, nil
}

// parseStamp reads "MM/DD/YYYY HH:MM:SS" with an optional ".mmm"; millis
// reports whether the fraction was there (the Torque 6 format).
func parseStamp(s string, loc *time.Location) (time.Time, bool, error) {
	if len(s) != 19 && len(s) != 23 {
		return time.Time{}, false, fmt.Errorf("%w: time %q", ErrBadLine, s)
	}
	if s[2] != '/' || s[5] != '/' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false, fmt.Errorf("%w: time %q", ErrBadLine, s)
	}
	mo, ok1 := atoiFixed(s[0:2])
	d, ok2 := atoiFixed(s[3:5])
	y, ok3 := atoiFixed(s[6:10])
	h, ok4 := atoiFixed(s[11:13])
	mi, ok5 := atoiFixed(s[14:16])
	sec, ok6 := atoiFixed(s[17:19])
	ms, millis, ok7 := 0, len(s) == 23, true
	if millis {
		ms, ok7 = atoiFixed(s[20:23])
		ok7 = ok7 && s[19] == '.'
	}
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 {
		return time.Time{}, false, fmt.Errorf("%w: time %q", ErrBadLine, s)
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ms*int(time.Millisecond), loc)
	return t.UTC(), millis, nil
}

func atoiFixed(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

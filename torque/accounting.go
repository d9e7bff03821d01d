package torque

import (
	"fmt"
	"strings"
	"time"
)

// AcctRecord is one accounting line:
// "MM/DD/YYYY HH:MM:SS;T;jobid;key=value key=value ...".
type AcctRecord struct {
	Time time.Time // UTC
	Type byte      // Q S E D A R C T
	Job  string
	// Fields are the key=value pairs as written; which keys appear
	// differs between versions (see docs/torque.md).
	Fields map[string]string
}

const acctTypes = "QSEDARCT"

// ParseAcctLine parses one accounting line (without its newline), reading
// its zone-less time in loc. A word without "=" continues the previous
// value (a value containing a space).
func ParseAcctLine(line string, loc *time.Location) (AcctRecord, error) {
	parts := strings.SplitN(line, ";", 4)
	if len(parts) < 3 {
		return AcctRecord{}, fmt.Errorf("%w: accounting line has %d of 4 fields", ErrBadLine, len(parts))
	}
	ts, millis, err := parseStamp(parts[0], loc)
	if err != nil {
		return AcctRecord{}, err
	}
	if millis {
		return AcctRecord{}, fmt.Errorf("%w: accounting time with milliseconds %q", ErrBadLine, parts[0])
	}
	if len(parts[1]) != 1 || !strings.Contains(acctTypes, parts[1]) {
		return AcctRecord{}, fmt.Errorf("%w: accounting record type %q", ErrBadLine, parts[1])
	}
	if parts[2] == "" {
		return AcctRecord{}, fmt.Errorf("%w: accounting record without job id", ErrBadLine)
	}
	rec := AcctRecord{Time: ts, Type: parts[1][0], Job: parts[2]}
	if len(parts) == 4 {
		if rec.Fields, err = parseAcctFields(parts[3]); err != nil {
			return AcctRecord{}, err
		}
	}
	return rec, nil
}

func parseAcctFields(s string) (map[string]string, error) {
	fields := map[string]string{}
	last := ""
	for _, w := range strings.Fields(s) {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			if last == "" {
				return nil, fmt.Errorf("%w: accounting word %q is not key=value", ErrBadLine, w)
			}
			fields[last] += " " + w
			continue
		}
		fields[k], last = v, k
	}
	return fields, nil
}

// AcctEvent turns an accounting record into its event.
func AcctEvent(r AcctRecord) Event {
	ev := Event{Time: r.Time, Job: r.Job, Source: SourceAccounting, Fields: r.Fields}
	switch r.Type {
	case 'Q':
		ev.Kind = JobQueued
	case 'S':
		ev.Kind = JobStarted
	case 'E':
		ev.Kind = JobEnded
		if v, ok := r.Fields["Exit_status"]; ok {
			if n, ok := atoiSigned(v); ok {
				ev.ExitStatus = &n
			}
		}
	case 'D':
		ev.Kind = JobDeleted
	case 'A':
		ev.Kind = JobAborted
	case 'R':
		ev.Kind = JobRerun
	case 'C':
		ev.Kind = JobCheckpointed
	case 'T':
		ev.Kind = JobRestarted
	}
	return ev
}

func atoiSigned(s string) (int, bool) {
	neg := strings.HasPrefix(s, "-")
	n, ok := atoiFixed(strings.TrimPrefix(s, "-"))
	if !ok || s == "" || s == "-" || len(s) > 10 {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

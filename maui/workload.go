package maui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Maui 3.3.1 trace format version 230: a workload record (a job in a
// workload trace, and a completed job in stats/simstat.out or the daily
// stats file) has 44 whitespace-separated fields; a resource record (a node)
// has 21. An empty value is the literal "[NONE]"; plain "NONE" in a flags
// field silently sets flags.
const (
	TraceVersion       = 230
	workloadFieldCount = 44
	resourceFieldCount = 21
)

// Workload record field positions (0-based) that lookahead reads or writes.
const (
	wfID          = 0
	wfNodes       = 1
	wfTasks       = 2
	wfUser        = 3
	wfGroup       = 4
	wfWCLimit     = 5
	wfState       = 6
	wfClass       = 7
	wfQueue       = 8
	wfDispatch    = 9
	wfStart       = 10
	wfCompletion  = 11
	wfSQTime      = 20
	wfTasksAlloc  = 21
	wfTPN         = 22
	wfQOS         = 23
	wfFlags       = 24
	wfAccount     = 25
	wfMNode       = 37
	wfHostList    = 39
	wfReservation = 40
)

// WorkloadRecord is one v230 workload line. Runtime as Maui simulates it
// is Completion − max(Dispatch, Start). Hosts is the allocated host list
// (MNode, joined by ':' in the file; one entry per node, not per task) and
// HostList the requested one (one entry per task).
type WorkloadRecord struct {
	ID          string
	Nodes       int
	Tasks       int
	User        string
	Group       string
	WCLimit     int64
	State       string
	Class       string
	Queue       int64
	Dispatch    int64
	Start       int64
	Completion  int64
	Account     string
	Flags       string
	Hosts       []string
	HostList    []string
	Reservation string
	// Fields holds all 44 fields as read, for callers needing the rest.
	Fields []string
}

// Runtime is the simulated runtime of the record.
func (w WorkloadRecord) Runtime() int64 { return w.Completion - max(w.Dispatch, w.Start) }

// ParseWorkload reads v230 workload records: a workload trace, Maui's
// stats/simstat.out or a daily stats file. "VERSION 230" lines and "#"
// comments are skipped; another version, or a record without 44 fields, is
// an error naming the line.
func ParseWorkload(r io.Reader) ([]WorkloadRecord, error) {
	ls, err := lines(r)
	if err != nil {
		return nil, fmt.Errorf("workload trace: %w", err)
	}
	var out []WorkloadRecord
	for i, l := range ls {
		f := strings.Fields(l)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "VERSION":
			if len(f) != 2 || f[1] != strconv.Itoa(TraceVersion) {
				return nil, &lineError{"workload trace", i + 1, l, fmt.Errorf("unsupported version (want %d)", TraceVersion)}
			}
		default:
			rec, err := parseWorkloadFields(f)
			if err != nil {
				return nil, &lineError{"workload trace", i + 1, l, err}
			}
			out = append(out, rec)
		}
	}
	return out, nil
}

func parseWorkloadFields(f []string) (WorkloadRecord, error) {
	if len(f) != workloadFieldCount {
		return WorkloadRecord{}, fmt.Errorf("want %d fields, got %d", workloadFieldCount, len(f))
	}
	w := WorkloadRecord{ID: f[wfID], User: f[wfUser], Group: f[wfGroup], State: f[wfState],
		Class: f[wfClass], Account: f[wfAccount], Flags: f[wfFlags], Fields: f,
		Hosts: hostField(f[wfMNode]), HostList: hostField(f[wfHostList]), Reservation: noneEmpty(f[wfReservation])}
	ints := []struct {
		dst *int64
		i   int
	}{{&w.WCLimit, wfWCLimit}, {&w.Queue, wfQueue}, {&w.Dispatch, wfDispatch}, {&w.Start, wfStart}, {&w.Completion, wfCompletion}}
	for _, p := range ints {
		v, err := strconv.ParseInt(f[p.i], 10, 64)
		if err != nil {
			return w, fmt.Errorf("field %d %q: not an integer", p.i+1, f[p.i])
		}
		*p.dst = v
	}
	var err error
	if w.Nodes, err = atoiField(f[wfNodes], "nodes"); err != nil {
		return w, err
	}
	w.Tasks, err = atoiField(f[wfTasks], "tasks")
	return w, err
}

func noneEmpty(s string) string {
	if s == "[NONE]" || s == "NONE" {
		return ""
	}
	return s
}

func hostField(s string) []string {
	if noneEmpty(s) == "" {
		return nil
	}
	return strings.Split(s, ":")
}

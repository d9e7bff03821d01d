package maui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// QueueJob is one job row of plain `showq`. Time is REMAINING (limit minus
// elapsed, not the real remaining runtime) for active jobs and WCLIMIT for
// idle/blocked ones; When is STARTTIME or QUEUETIME as printed.
type QueueJob struct {
	Name  string
	User  string
	State string
	Procs int
	Time  int64
	When  string
}

// Showq is plain `showq` output by section.
type Showq struct {
	Active  []QueueJob
	Idle    []QueueJob
	Blocked []QueueJob
	Total   int // "Total Jobs:" trailer
}

// ParseShowq reads plain `showq`. The "Total Jobs:" trailer must agree with
// the rows read.
func ParseShowq(r io.Reader) (Showq, error) {
	var out Showq
	ls, err := lines(r)
	if err != nil {
		return out, fmt.Errorf("showq: %w", err)
	}
	var cur *[]QueueJob
	total := -1
	for i, l := range ls {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "ACTIVE JOBS"):
			cur = &out.Active
		case strings.HasPrefix(l, "IDLE JOBS"):
			cur = &out.Idle
		case strings.HasPrefix(l, "BLOCKED JOBS"):
			cur = &out.Blocked
		case strings.HasPrefix(l, "Total Jobs:"):
			if len(f) < 3 {
				return out, &lineError{"showq", i + 1, l, fmt.Errorf("short trailer")}
			}
			if total, err = atoiField(f[2], "total"); err != nil {
				return out, &lineError{"showq", i + 1, l, err}
			}
		case len(f) == 0 || f[0] == "JOBNAME" || cur == nil || !isQueueRow(f):
		default:
			j, err := parseQueueRow(f)
			if err != nil {
				return out, &lineError{"showq", i + 1, l, err}
			}
			*cur = append(*cur, j)
		}
	}
	if cur == nil {
		return out, fmt.Errorf("showq: no ACTIVE JOBS section (not showq output?)")
	}
	out.Total = total
	if n := len(out.Active) + len(out.Idle) + len(out.Blocked); total != n {
		return out, fmt.Errorf("showq: trailer says %d jobs, read %d", total, n)
	}
	return out, nil
}

// isQueueRow tells job rows from the summary lines ("4 Active Jobs ...",
// "3 Idle Jobs"): a job row has 9 fields with an integer in the 4th.
func isQueueRow(f []string) bool {
	if len(f) != 9 {
		return false
	}
	_, err := strconv.Atoi(f[3])
	return err == nil && f[2] != "Jobs" && f[4] != "of"
}

func parseQueueRow(f []string) (QueueJob, error) {
	j := QueueJob{Name: f[0], User: f[1], State: f[2], When: strings.Join(f[5:], " ")}
	var err error
	if j.Procs, err = atoiField(f[3], "procs"); err != nil {
		return j, err
	}
	j.Time, err = ParseDuration(f[4])
	return j, err
}

// PrioJob is one row of `showq -i` (eligible idle jobs, highest priority
// first). Reserved is the '*' Maui appends to a job that holds a
// reservation (the top jobs, RESERVATIONDEPTH).
type PrioJob struct {
	Name      string
	Reserved  bool
	Priority  int64
	XFactor   float64
	QOSFlag   string
	User      string
	Group     string
	Procs     int
	WCLimit   int64
	Class     string
	QueueTime string
}

// ParseShowqIdle reads `showq -i`, in Maui's priority order. The "Jobs: N"
// trailer must agree with the rows read.
func ParseShowqIdle(r io.Reader) ([]PrioJob, error) {
	ls, err := lines(r)
	if err != nil {
		return nil, fmt.Errorf("showq -i: %w", err)
	}
	var out []PrioJob
	header, total := false, -1
	for i, l := range ls {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case f[0] == "JobName":
			header = true
		case f[0] == "Jobs:":
			if len(f) < 2 {
				return nil, &lineError{"showq -i", i + 1, l, fmt.Errorf("short trailer")}
			}
			if total, err = atoiField(f[1], "jobs"); err != nil {
				return nil, &lineError{"showq -i", i + 1, l, err}
			}
		case !header:
			return nil, &lineError{"showq -i", i + 1, l, fmt.Errorf("row before the header")}
		default:
			j, err := parsePrioRow(f)
			if err != nil {
				return nil, &lineError{"showq -i", i + 1, l, err}
			}
			out = append(out, j)
		}
	}
	if !header {
		return nil, fmt.Errorf("showq -i: no JobName header (not showq -i output?)")
	}
	if total != len(out) {
		return nil, fmt.Errorf("showq -i: trailer says %d jobs, read %d", total, len(out))
	}
	return out, nil
}

func parsePrioRow(f []string) (PrioJob, error) {
	if len(f) != 13 {
		return PrioJob{}, fmt.Errorf("want 13 fields, got %d", len(f))
	}
	j := PrioJob{Name: strings.TrimRight(f[0], "*"), QOSFlag: f[3], User: f[4], Group: f[5], Class: f[8], QueueTime: strings.Join(f[9:], " ")}
	j.Reserved = strings.HasSuffix(f[0], "*")
	var err error
	if j.Priority, err = strconv.ParseInt(f[1], 10, 64); err != nil {
		return j, fmt.Errorf("priority %q: not an integer", f[1])
	}
	if j.XFactor, err = strconv.ParseFloat(f[2], 64); err != nil {
		return j, fmt.Errorf("xfactor %q: not a number", f[2])
	}
	if j.Procs, err = atoiField(f[6], "procs"); err != nil {
		return j, err
	}
	j.WCLimit, err = ParseDuration(f[7])
	return j, err
}

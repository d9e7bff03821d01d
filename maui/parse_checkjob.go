package maui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// JobCheck is what lookahead reads from `checkjob <job>`. Times are as
// printed (local time of the Maui host); WallUsed/WallLimit in seconds.
// AdvRes is the reservation named by the job's ADVRES flag, if any.
type JobCheck struct {
	Name          string
	State         string
	User          string
	Group         string
	Account       string
	Class         string
	QOS           string
	WallUsed      int64
	WallLimit     int64
	SubmitTime    string
	StartTime     string
	TotalTasks    int
	Allocated     []HostTasks
	Flags         []string
	AdvRes        string
	Reservation   string
	ResStart      int64
	ResEnd        int64
	StartPriority int64
}

// ErrJobNotFound is returned for checkjob/showstart on a job Maui does not
// know (it exits 1 with "cannot locate job").
var ErrJobNotFound = fmt.Errorf("maui: cannot locate job")

// ParseCheckjob reads `checkjob <job>` stdout.
func ParseCheckjob(r io.Reader) (JobCheck, error) {
	var j JobCheck
	ls, err := lines(r)
	if err != nil {
		return j, fmt.Errorf("checkjob: %w", err)
	}
	for i, l := range ls {
		if err := checkjobLine(&j, strings.TrimSpace(l)); err != nil {
			return j, &lineError{"checkjob", i + 1, l, err}
		}
	}
	if j.Name == "" {
		return j, fmt.Errorf("checkjob: no \"checking job\" line (not checkjob output?)")
	}
	return j, nil
}

func checkjobLine(j *JobCheck, l string) error {
	key, val, _ := strings.Cut(l, ":")
	val = strings.TrimSpace(val)
	switch {
	case strings.HasPrefix(l, "checking job "):
		j.Name = strings.TrimPrefix(l, "checking job ")
	case key == "State":
		j.State, _, _ = strings.Cut(val, " ")
	case key == "Creds":
		for _, kv := range strings.Fields(val) {
			k, v, _ := strings.Cut(kv, ":")
			switch k {
			case "user":
				j.User = v
			case "group":
				j.Group = v
			case "account":
				j.Account = v
			case "class":
				j.Class = v
			case "qos":
				j.QOS = v
			}
		}
	case key == "WallTime":
		f := strings.Fields(val)
		if len(f) < 3 || f[1] != "of" {
			return fmt.Errorf("want \"WallTime: X of Y\"")
		}
		var err error
		if j.WallUsed, err = ParseDuration(f[0]); err != nil {
			return err
		}
		j.WallLimit, err = ParseDuration(f[2])
		return err
	case key == "SubmitTime":
		j.SubmitTime = val
	case key == "StartTime":
		j.StartTime = val
	case key == "Total Tasks":
		n, err := atoiField(val, "tasks")
		j.TotalTasks = n
		return err
	case key == "Flags":
		j.Flags = strings.Fields(val)
		for _, fl := range j.Flags {
			if id, ok := strings.CutPrefix(fl, "ADVRES:"); ok {
				j.AdvRes = id
			}
		}
	case strings.HasPrefix(l, "Reservation '"):
		return checkjobRes(j, l)
	case strings.HasPrefix(l, "PE:"):
		if _, p, ok := strings.Cut(l, "StartPriority:"); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
			if err != nil {
				return fmt.Errorf("StartPriority %q: not an integer", p)
			}
			j.StartPriority = v
		}
	case strings.HasPrefix(l, "[") && j.State != "" && len(j.Allocated) == 0:
		return parseAllocated(j, l)
	}
	return nil
}

// checkjobRes reads "Reservation 'j04' (1:50:00 -> 2:50:00  Duration: 1:00:00)".
func checkjobRes(j *JobCheck, l string) error {
	rest := strings.TrimPrefix(l, "Reservation '")
	id, rest, ok := strings.Cut(rest, "' (")
	f := strings.Fields(rest)
	if !ok || len(f) < 3 || f[1] != "->" {
		return fmt.Errorf("want \"Reservation 'id' (S -> E ...)\"")
	}
	j.Reservation = id
	var err error
	if j.ResStart, err = ParseDuration(f[0]); err != nil {
		return err
	}
	j.ResEnd, err = ParseDuration(f[2])
	return err
}

// parseAllocated reads "[vm:2]" or "[n01:1][n02:2]".
func parseAllocated(j *JobCheck, l string) error {
	for _, part := range strings.Split(strings.Trim(l, "[]"), "][") {
		node, n, ok := strings.Cut(part, ":")
		tc, err := strconv.Atoi(n)
		if !ok || err != nil || node == "" {
			return fmt.Errorf("allocated nodes: want [node:tasks], got %q", part)
		}
		j.Allocated = append(j.Allocated, HostTasks{Node: node, Tasks: tc})
	}
	return nil
}

// StartEstimate is `showstart <job>`: the earliest start and completion,
// relative (seconds from Maui's clock) and as printed.
type StartEstimate struct {
	Job       string
	Procs     int
	Walltime  int64
	StartIn   int64
	StartAt   string
	EndIn     int64
	EndAt     string
	Partition string
}

// ParseShowstart reads `showstart <job>` stdout.
func ParseShowstart(r io.Reader) (StartEstimate, error) {
	var s StartEstimate
	ls, err := lines(r)
	if err != nil {
		return s, fmt.Errorf("showstart: %w", err)
	}
	for i, l := range ls {
		if err := showstartLine(&s, l); err != nil {
			return s, &lineError{"showstart", i + 1, l, err}
		}
	}
	if s.Job == "" || s.StartAt == "" {
		return s, fmt.Errorf("showstart: no \"job X requires\"/\"Earliest start\" lines (not showstart output?)")
	}
	return s, nil
}

func showstartLine(s *StartEstimate, l string) error {
	f := strings.Fields(l)
	var err error
	switch {
	case len(f) == 0:
	case f[0] == "job" && len(f) == 7 && f[2] == "requires":
		s.Job = f[1]
		if s.Procs, err = atoiField(f[3], "procs"); err != nil {
			return err
		}
		s.Walltime, err = ParseDuration(f[6])
	case strings.HasPrefix(l, "Earliest start in") && len(f) >= 6 && f[4] == "on":
		s.StartAt = strings.Join(f[5:], " ")
		s.StartIn, err = ParseDuration(f[3])
	case strings.HasPrefix(l, "Earliest completion in") && len(f) >= 6 && f[4] == "on":
		s.EndAt = strings.Join(f[5:], " ")
		s.EndIn, err = ParseDuration(f[3])
	case strings.HasPrefix(l, "Best Partition:"):
		s.Partition = strings.TrimSpace(strings.TrimPrefix(l, "Best Partition:"))
	}
	return err
}

package torque

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"lookahead/forecast"
)

// xmlJob is one <Job> of `qstat -f -x`. Unknown elements are ignored.
type xmlJob struct {
	ID           string `xml:"Job_Id"`
	Name         string `xml:"Job_Name"`
	Owner        string `xml:"Job_Owner"`
	State        string `xml:"job_state"`
	Queue        string `xml:"queue"`
	Account      string `xml:"Account_Name"`
	EUser        string `xml:"euser"`
	EGroup       string `xml:"egroup"`
	Ctime        string `xml:"ctime"`
	Qtime        string `xml:"qtime"`
	StartTime    string `xml:"start_time"`
	ExecHost     string `xml:"exec_host"`
	Priority     string `xml:"Priority"`
	Extend       string `xml:"x"`
	ArrayRequest string `xml:"job_array_request"`
	Resources    struct {
		Nodes    string `xml:"nodes"`
		Procs    string `xml:"procs"`
		Ncpus    string `xml:"ncpus"`
		Walltime string `xml:"walltime"`
		Mem      string `xml:"mem"`
		Pmem     string `xml:"pmem"`
		Qos      string `xml:"qos"`
	} `xml:"Resource_List"`
	Used struct {
		Walltime string `xml:"walltime"`
	} `xml:"resources_used"`
	Walltime struct {
		Remaining string `xml:"Remaining"`
	} `xml:"Walltime"`
}

// ParseQstatXML reads the output of `qstat -f -x` (any of Torque 2.5, 4.2,
// 6.1). It returns every job listed, completed (C) ones and array parents
// ("3[].vm") included; Client.Snapshot filters them. Empty input (no jobs on
// the server) gives no jobs and no error. A job without Job_Id or job_state
// is an error naming the job's position. A job whose exec_host does not
// parse is kept without Hosts (it holds its processors wherever the
// forecast finds them free) and named in a *SkippedError returned beside
// the jobs.
func ParseQstatXML(r io.Reader) ([]forecast.LocalJob, error) {
	return decodeElements(r, "qstat", "Job", "job",
		func(x xmlJob) string { return x.ID }, xmlJob.toLocal)
}

func (x xmlJob) toLocal() (forecast.LocalJob, error) {
	if x.ID == "" {
		return forecast.LocalJob{}, errors.New("missing Job_Id")
	}
	if x.State == "" {
		return forecast.LocalJob{}, errors.New("missing job_state")
	}
	j := forecast.LocalJob{
		ID: x.ID, Name: x.Name, State: x.State, Queue: x.Queue, Account: x.Account,
		User: x.EUser, Group: x.EGroup, QOS: x.Resources.Qos,
	}
	if j.User == "" {
		j.User, _, _ = strings.Cut(x.Owner, "@")
	}
	var err error
	if j.Submitted, err = firstEpoch(x.Qtime, x.Ctime); err != nil {
		return j, err
	}
	if err := x.fillRequest(&j); err != nil {
		return j, err
	}
	if err := x.fillRun(&j); err != nil {
		return j, err
	}
	x.fillExtend(&j)
	if x.ExecHost != "" {
		// Unparsed, the job keeps its processors without a placement.
		if j.Hosts, err = ParseExecHost(x.ExecHost); err != nil {
			return j, &ItemError{Where: "job " + x.ID + " exec_host", Item: x.ExecHost, Err: err}
		}
	}
	return j, nil
}

func (x xmlJob) fillRequest(j *forecast.LocalJob) error {
	r := x.Resources
	if r.Nodes != "" {
		spec, err := ParseNodeSpec(r.Nodes)
		if err != nil {
			return err
		}
		j.Procs, j.Nodes, j.PPN, j.Features = spec.Procs, spec.Nodes, spec.PPN, spec.Required
	}
	// procs=N adds processors anywhere; ncpus=N counts only without nodes=.
	extra := r.Procs
	if extra == "" && r.Nodes == "" {
		extra = r.Ncpus
	}
	if extra != "" {
		n, err := strconv.Atoi(strings.TrimSpace(extra))
		if err != nil || n < 0 {
			return fmt.Errorf("Resource_List procs/ncpus %q", extra)
		}
		j.Procs += n
	}
	if j.Procs == 0 {
		j.Procs = 1 // Torque's default request: one processor on one node
	}
	var err error
	if r.Walltime != "" {
		if j.Walltime, err = ParseDuration(r.Walltime); err != nil {
			return fmt.Errorf("Resource_List.walltime: %w", err)
		}
	}
	return x.fillMem(j)
}

func (x xmlJob) fillMem(j *forecast.LocalJob) error {
	r := x.Resources
	switch {
	case r.Mem != "":
		mb, err := ParseSizeMB(r.Mem)
		if err != nil {
			return fmt.Errorf("Resource_List.mem: %w", err)
		}
		j.MemMB = mb
	case r.Pmem != "":
		mb, err := ParseSizeMB(r.Pmem)
		if err != nil {
			return fmt.Errorf("Resource_List.pmem: %w", err)
		}
		j.MemMB = mb * int64(j.Procs)
	}
	return nil
}

func (x xmlJob) fillRun(j *forecast.LocalJob) error {
	var err error
	if x.StartTime != "" {
		if j.Started, err = firstEpoch(x.StartTime); err != nil {
			return err
		}
	}
	if x.Used.Walltime != "" {
		if j.Used, err = ParseDuration(x.Used.Walltime); err != nil {
			return fmt.Errorf("resources_used.walltime: %w", err)
		}
	} else if x.Walltime.Remaining != "" && j.Walltime > 0 {
		rem, err := strconv.ParseInt(strings.TrimSpace(x.Walltime.Remaining), 10, 64)
		if err != nil {
			return fmt.Errorf("Walltime.Remaining %q", x.Walltime.Remaining)
		}
		j.Used = max(0, j.Walltime-rem)
	}
	if x.Priority != "" {
		if j.Priority, err = strconv.ParseInt(strings.TrimSpace(x.Priority), 10, 64); err != nil {
			return fmt.Errorf("job Priority %q: not an integer", x.Priority)
		}
	}
	return nil
}

// fillExtend reads the extension attribute (-W x=...): FLAGS:ADVRES:<id>
// binds the job to a Maui reservation, QOS:<name> names its QoS. Only the
// ADVRES flag counts as binding: Maui 3.3.1 ignores Resource_List.advres.
func (x xmlJob) fillExtend(j *forecast.LocalJob) {
	for _, part := range strings.FieldsFunc(x.Extend, func(r rune) bool { return r == ';' }) {
		if _, res, ok := strings.Cut(part, "ADVRES:"); ok {
			res, _, _ = strings.Cut(res, ",")
			j.Reservation = strings.TrimSpace(res)
		}
		if q, ok := strings.CutPrefix(part, "QOS:"); ok && j.QOS == "" {
			j.QOS = strings.TrimSpace(q)
		}
	}
}

func firstEpoch(vals ...string) (int64, error) {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("time %q: not epoch seconds", v)
		}
		return n, nil
	}
	return 0, nil
}

// IsArrayParent reports whether id names a job array as a whole
// ("3[].vm"), as opposed to one of its subjobs ("3[0].vm").
func IsArrayParent(id string) bool { return strings.Contains(id, "[]") }

package torque

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"lookahead/forecast"
)

// BatchJob is what qstat -f -x says of one job that lookahead may have
// submitted: enough to find a grid job's part by name and follow it to its
// end. Times are Unix seconds, 0 when not known yet.
type BatchJob struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	User  string `json:"user"` // euser, else Job_Owner without @host
	State string `json:"state"`
	// Reservation is the reservation named by -W x=FLAGS:ADVRES:<id>.
	Reservation string `json:"reservation,omitempty"`
	Account     string `json:"account,omitempty"`
	Queued      int64  `json:"queued,omitempty"`
	Started     int64  `json:"started,omitempty"`
	// Ended is comp_time: set once the job completed (state C).
	Ended int64 `json:"ended,omitempty"`
	// ExitStatus is the job's exit status once completed; nil for a job
	// deleted before it ran (Torque records none) or not yet ended.
	ExitStatus *int   `json:"exit_status,omitempty"`
	Output     string `json:"output,omitempty"` // Output_Path, host:path
	Error      string `json:"error,omitempty"`  // Error_Path, host:path
}

// Done reports whether the job completed (state C), however it ended.
func (j BatchJob) Done() bool { return j.State == forecast.JobCompleted }

// xmlBatchJob is the part of a <Job> that BatchJob needs; unknown elements
// are ignored.
type xmlBatchJob struct {
	ID         string `xml:"Job_Id"`
	Name       string `xml:"Job_Name"`
	Owner      string `xml:"Job_Owner"`
	EUser      string `xml:"euser"`
	State      string `xml:"job_state"`
	Account    string `xml:"Account_Name"`
	Extend     string `xml:"x"`
	Qtime      string `xml:"qtime"`
	Ctime      string `xml:"ctime"`
	StartTime  string `xml:"start_time"`
	CompTime   string `xml:"comp_time"`
	ExitStatus string `xml:"exit_status"`
	Output     string `xml:"Output_Path"`
	Error      string `xml:"Error_Path"`
}

// ParseBatchJobs reads `qstat -f -x` (one job or all; Torque 2.5, 4.2 and
// 6.1) into BatchJobs, completed jobs included. Empty input gives none. A
// job without Job_Id or job_state, or with a malformed time or exit
// status, is an error naming it.
func ParseBatchJobs(r io.Reader) ([]BatchJob, error) {
	return decodeElements(r, "qstat", "Job", "job",
		func(x xmlBatchJob) string { return x.ID }, xmlBatchJob.toBatch)
}

func (x xmlBatchJob) toBatch() (BatchJob, error) {
	if x.ID == "" {
		return BatchJob{}, errors.New("missing Job_Id")
	}
	if x.State == "" {
		return BatchJob{}, errors.New("missing job_state")
	}
	j := BatchJob{ID: x.ID, Name: x.Name, User: x.EUser, State: x.State, Account: x.Account,
		Output: x.Output, Error: x.Error}
	if j.User == "" {
		j.User, _, _ = strings.Cut(x.Owner, "@")
	}
	j.Reservation = (xmlJob{Extend: x.Extend}).advres()
	var err error
	if j.Queued, err = firstEpoch(x.Qtime, x.Ctime); err != nil {
		return j, err
	}
	if j.Started, err = firstEpoch(x.StartTime); err != nil {
		return j, err
	}
	if j.Ended, err = firstEpoch(x.CompTime); err != nil {
		return j, err
	}
	if s := strings.TrimSpace(x.ExitStatus); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return j, fmt.Errorf("exit_status %q", x.ExitStatus)
		}
		j.ExitStatus = &n
	}
	return j, nil
}

// advres is the reservation the extension attribute binds the job to.
func (x xmlJob) advres() string {
	var j forecast.LocalJob
	x.fillExtend(&j)
	return j.Reservation
}

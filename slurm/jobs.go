package slurm

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Job is one job of squeue --json.
type Job struct {
	ID          int64
	Name        string
	User        string
	UID         int64
	Account     string // "" without slurmdbd
	QOS         string // "" without slurmdbd
	Partition   string
	Priority    int64
	State       string // PENDING, RUNNING, COMPLETING, CANCELLED, …
	Reason      string // why it pends: Resources, Priority, Reservation, …
	Reservation string // the reservation it is bound to (--reservation), or ""
	CPUs        int
	NodeCount   int
	Nodes       string // hostlist of the nodes it holds (running), or ""
	Submit      time.Time
	// Start is the actual start of a running job, or backfill's planned
	// start of a pending one; nil when Slurm has none (0 in the JSON: a
	// pending job backfill did not plan, or one bound to a reservation).
	Start *time.Time
	// End is Start plus the time limit (Slurm's own figure); nil with Start.
	End *time.Time
	// TimeLimit is nil when the job has none (INFINITE) or it is unset.
	TimeLimit *time.Duration
	// Alloc is the cores the job holds on each node (job_resources), in
	// Slurm's order; empty for a job that holds none.
	Alloc []NodeCPUs
	// ExitCode is exit_code as squeue --json gives it (the job's exit
	// status once it ended; 15 for a cancelled one in the captures).
	ExitCode int
	// Output is the job's stdout path (standard_output).
	Output string
}

// NodeCPUs is a number of cores a job holds on one node.
type NodeCPUs struct {
	Node string
	CPUs int
}

// Running says whether the job holds its nodes now (running or completing).
func (j Job) Running() bool { return j.State == "RUNNING" || j.State == "COMPLETING" }

// Slurm's "no value" and "infinite" for 32-bit fields.
const (
	infinite32 = 0xffffffff
	noVal32    = 0xfffffffe
)

type squeueDoc struct {
	openapiErrors
	Jobs []struct {
		ID        *int64 `json:"job_id"`
		Name      string `json:"name"`
		User      string `json:"user_name"`
		UID       int64  `json:"user_id"`
		Account   string `json:"account"`
		QOS       string `json:"qos"`
		Partition string `json:"partition"`
		Priority  int64  `json:"priority"`
		State     string `json:"job_state"`
		Reason    string `json:"state_reason"`
		Resv      string `json:"resv_name"`
		CPUs      int    `json:"cpus"`
		NodeCount int    `json:"node_count"`
		Nodes     string `json:"nodes"`
		Submit    int64  `json:"submit_time"`
		Start     int64  `json:"start_time"`
		End       int64  `json:"end_time"`
		TimeLimit *int64 `json:"time_limit"` // minutes
		ExitCode  int    `json:"exit_code"`
		Output    string `json:"standard_output"`
		Resources struct {
			Nodes []struct {
				Name    string `json:"nodename"`
				Sockets map[string]struct {
					Cores map[string]string `json:"cores"`
				} `json:"sockets"`
			} `json:"allocated_nodes"`
		} `json:"job_resources"`
	} `json:"jobs"`
}

// ParseSqueueJSON reads the jobs of `squeue --json`.
func ParseSqueueJSON(r io.Reader) ([]Job, error) {
	var doc squeueDoc
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("squeue --json: %w", err)
	}
	if err := doc.err("squeue --json"); err != nil {
		return nil, err
	}
	jobs := make([]Job, 0, len(doc.Jobs))
	for i, d := range doc.Jobs {
		if d.ID == nil {
			return nil, fmt.Errorf("squeue --json: job %d has no job_id", i)
		}
		j := Job{ID: *d.ID, Name: d.Name, User: d.User, UID: d.UID, Account: d.Account,
			QOS: d.QOS, Partition: d.Partition, Priority: d.Priority, State: d.State,
			Reason: d.Reason, Reservation: d.Resv, CPUs: d.CPUs, NodeCount: d.NodeCount,
			Nodes: d.Nodes, Submit: unixUTC(d.Submit), ExitCode: d.ExitCode, Output: d.Output}
		for _, n := range d.Resources.Nodes {
			cores := 0
			for _, sk := range n.Sockets {
				cores += len(sk.Cores)
			}
			if n.Name != "" && cores > 0 {
				j.Alloc = append(j.Alloc, NodeCPUs{Node: n.Name, CPUs: cores})
			}
		}
		if d.Start > 0 {
			s := unixUTC(d.Start)
			j.Start = &s
			if d.End > 0 {
				e := unixUTC(d.End)
				j.End = &e
			}
		}
		if d.TimeLimit != nil && *d.TimeLimit != infinite32 && *d.TimeLimit != noVal32 && *d.TimeLimit >= 0 {
			l := time.Duration(*d.TimeLimit) * time.Minute
			j.TimeLimit = &l
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

func unixUTC(s int64) time.Time {
	if s <= 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

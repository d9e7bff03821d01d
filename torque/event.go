package torque

import (
	"context"
	"time"
)

// EventKind says what changed. The string values are stable (logs, JSON).
type EventKind string

// Event kinds. Job* events name a job, Node* events a node.
const (
	// JobQueued: a job entered a queue (accounting Q; server log
	// "enqueuing into" / state change to QUEUED).
	JobQueued EventKind = "job_queued"
	// JobStarted: a job started running (accounting S; "Job Run").
	JobStarted EventKind = "job_started"
	// JobEnded: a job finished and its processors are free (accounting E;
	// state change to COMPLETE).
	JobEnded EventKind = "job_ended"
	// JobDeleted: qdel was accepted (accounting D; "Job deleted").
	JobDeleted EventKind = "job_deleted"
	// JobAborted: the server aborted the job (accounting A).
	JobAborted EventKind = "job_aborted"
	// JobRerun: the job was requeued to run again (accounting R).
	JobRerun EventKind = "job_rerun"
	// JobModified: job attributes changed (qalter; "attributes set" on a
	// job).
	JobModified EventKind = "job_modified"
	// JobCheckpointed: the job was checkpointed and held (accounting C).
	JobCheckpointed EventKind = "job_checkpointed"
	// JobRestarted: the job restarted from a checkpoint (accounting T).
	JobRestarted EventKind = "job_restarted"
	// JobStateChanged: a state transition logged by svr_setjobstate
	// (loglevel ≥ 4); From/To hold "STATE-SUBSTATE".
	JobStateChanged EventKind = "job_state"
	// NodeStateChanged: a node's state changed (From/To when known).
	NodeStateChanged EventKind = "node_state"
	// NodeModified: node attributes were set (pbsnodes -o/-c/-N, qmgr).
	NodeModified EventKind = "node_modified"
	// ServerStarted / ServerShutdown: pbs_server (re)started or stopped;
	// everything may have changed.
	ServerStarted  EventKind = "server_started"
	ServerShutdown EventKind = "server_shutdown"
	// SchedulerNotified: pbs_server notified the scheduler port (Code).
	SchedulerNotified EventKind = "sched_notify"
)

// Event sources.
const (
	SourceServerLog  = "server_logs"
	SourceAccounting = "accounting"
	SourceSchedPort  = "sched_port"
)

// RecordID names the line an event came from, stable across restarts and
// renames: File is the tailer's key for the file (see tail.FileKey) and
// Offset the byte offset of the line's start. Events from the listener have
// a zero RecordID. A handler that remembers the RecordIDs it has applied
// (or the greatest Offset per File) is idempotent under redelivery.
type RecordID struct {
	File   string `json:"file,omitempty"`
	Offset int64  `json:"offset"`
}

// Event is one typed change in the cluster. Time is UTC (log times are
// converted from the configured location). Fields that do not apply to a
// kind are zero.
type Event struct {
	Time   time.Time `json:"time"`
	Kind   EventKind `json:"kind"`
	Job    string    `json:"job,omitempty"`
	Node   string    `json:"node,omitempty"`
	Source string    `json:"source"`
	// Record is where the event was read; Index numbers the events made
	// from one record (usually 0).
	Record RecordID `json:"record,omitzero"`
	Index  int      `json:"index,omitempty"`
	// From and To are the old and new state of a state change.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// ExitStatus is set for accounting E records that carry one.
	ExitStatus *int `json:"exit_status,omitempty"`
	// Code is the scheduler command of a SchedulerNotified event.
	Code SchedCmd `json:"code,omitempty"`
	// Fields are an accounting record's key=value pairs.
	Fields map[string]string `json:"fields,omitempty"`
	// Text is the log message (server logs) for context.
	Text string `json:"text,omitempty"`
}

// Handler receives events. Returning an error stops the source that called
// it; the record is then not marked as handled and will be handed on again
// after a restart.
type Handler func(ctx context.Context, ev Event) error

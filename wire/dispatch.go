package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// Dispatch: once a grid job is reserved on all its sites, the broker asks
// each involved agent to submit that site's part into its reservation
// (VerbDispatch), and to delete it again when the job fails or is
// cancelled (VerbStop). See docs/dispatch.md.
const (
	TypeDispatch      = "dispatch.v1"
	TypeDispatchReply = "dispatch-reply.v1"
	TypeStop          = "stop.v1"
	TypeStopReply     = "stop-reply.v1"

	VerbDispatch = "dispatch"
	VerbStop     = "stop"

	// JobDispatched: every part is submitted to its site's batch system,
	// waiting for its reservation to start.
	JobDispatched = "dispatched"

	// MaxScriptBytes bounds a grid job's script (NATS' default max payload
	// is 1 MiB; the script travels in the submit and dispatch requests).
	MaxScriptBytes = 256 << 10
)

// Part states as the broker keeps them (PartStatus.State).
const (
	PartPending    = "pending"    // not dispatched yet
	PartDispatched = "dispatched" // submitted, waiting for its start
	PartStarted    = "started"    // running
	PartFinished   = "finished"   // ended with exit status 0
	PartFailed     = "failed"     // ended otherwise, deleted, aborted, refused
	PartDeleted    = "deleted"    // deleted by the broker (the job failed or was cancelled)
)

// PartSpec is one site's share of a grid job, as LOOKAHEAD_PARTS lists
// it to every part.
type PartSpec struct {
	Site  string      `json:"site"`
	Nodes []NodeProcs `json:"nodes"`
}

// DispatchRequest asks site to submit part Part of grid job Job into the
// job's reservation there. Walltime is the reservation's length (the job's
// reference walltime scaled by the slowest processors of the allocation);
// Start is the reservation start. Retrying with the same Job and Part
// finds the part already submitted instead of submitting it twice.
type DispatchRequest struct {
	Type        string     `json:"type"`
	Job         string     `json:"job"`
	Site        string     `json:"site"`
	Part        int        `json:"part"`
	Parts       []PartSpec `json:"parts"`
	Start       int64      `json:"start"`
	Walltime    int64      `json:"walltime"`
	User        string     `json:"user"`
	Account     string     `json:"account,omitempty"`
	Script      []byte     `json:"script"`
	RequestedBy string     `json:"requested_by,omitempty"`
	Epoch       uint64     `json:"epoch,omitempty"` // as in ReserveRequest
	Timing
}

// DispatchReply says how the part was submitted: the local job id, the
// local user it runs as and where its output goes. Duplicate is set when
// a retry found the part already there. Code is a refusal otherwise
// (invalid, forbidden, not-found: no reservation, scheduler: qsub refused).
type DispatchReply struct {
	Type      string `json:"type"`
	Job       string `json:"job"`
	Site      string `json:"site"`
	Part      int    `json:"part"`
	Code      string `json:"code"`
	Message   string `json:"message,omitempty"`
	LocalID   string `json:"local_id,omitempty"`
	LocalUser string `json:"local_user,omitempty"`
	Output    string `json:"output,omitempty"`
	Error     string `json:"error,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// StopRequest asks a site to delete every part of Job it runs (qdel).
// Idempotent: nothing to delete succeeds with a note.
type StopRequest struct {
	Type        string `json:"type"`
	Job         string `json:"job"`
	Site        string `json:"site"`
	Reason      string `json:"reason,omitempty"`
	RequestedBy string `json:"requested_by,omitempty"`
	Epoch       uint64 `json:"epoch,omitempty"` // as in ReserveRequest
	Timing
}

// StopReply lists the local jobs deleted; Note says when there was none.
type StopReply struct {
	Type    string   `json:"type"`
	Job     string   `json:"job"`
	Site    string   `json:"site"`
	Code    string   `json:"code"`
	Deleted []string `json:"deleted,omitempty"`
	Note    string   `json:"note,omitempty"`
	Message string   `json:"message,omitempty"`
}

// PartStatus is the broker's view of one part of a dispatched grid job.
type PartStatus struct {
	Part       int    `json:"part"`
	Site       string `json:"site"`
	State      string `json:"state"`
	LocalID    string `json:"local_id,omitempty"`
	LocalUser  string `json:"local_user,omitempty"`
	Start      int64  `json:"start,omitempty"`
	End        int64  `json:"end,omitempty"`
	ExitStatus *int   `json:"exit_status,omitempty"`
	Output     string `json:"output,omitempty"`
	Error      string `json:"error,omitempty"`
	Message    string `json:"message,omitempty"`
	// BlockedUntil is when a foreign job the site reported in the part's
	// reservation leaves at the latest (JobEvent.Until): the part's start
	// grace counts from then when it is after the reservation start.
	BlockedUntil int64 `json:"blocked_until,omitempty"`
}

// PartName is the batch job name of a grid job's part: "la.<job>.<part>".
func PartName(job string, part int) string { return "la." + job + "." + strconv.Itoa(part) }

// ParsePartName is PartName's inverse; ok is false for other names.
func ParsePartName(name string) (job string, part int, ok bool) {
	rest, found := strings.CutPrefix(name, "la.")
	i := strings.LastIndexByte(rest, '.')
	if !found || i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != rest[i+1:] {
		return "", 0, false
	}
	return rest[:i], n, true
}

// FormatParts renders parts as LOOKAHEAD_PARTS: "site:node:procs" items
// joined by "+" (names are plain, so neither separator occurs in them).
func FormatParts(parts []PartSpec) string {
	var items []string
	for _, p := range parts {
		for _, n := range p.Nodes {
			items = append(items, fmt.Sprintf("%s:%s:%d", p.Site, n.Node, n.Procs))
		}
	}
	return strings.Join(items, "+")
}

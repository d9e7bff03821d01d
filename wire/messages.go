package wire

import "strings"

// Message types: every message carries Type, a versioned name, so a reader
// can refuse what it does not understand.
const (
	TypeForecast     = "forecast.v1"
	TypeHeartbeat    = "heartbeat.v1"
	TypeReserve      = "reserve.v1"
	TypeReserveReply = "reserve-reply.v1"
	TypeRelease      = "release.v1"
	TypeReleaseReply = "release-reply.v1"
	TypeList         = "list.v1"
	TypeListReply    = "list-reply.v1"
	TypeAudit        = "audit.v1"
	TypeJobEvent     = "jobevent.v1"
	TypeJobEventAck  = "jobevent-ack.v1"
)

// Stable result codes of agent and broker endpoints. A refusal is an answer
// with one of these codes, not a transport error.
const (
	CodeOK          = "ok"
	CodeStale       = "stale"       // the request was planned on an older forecast that no longer fits
	CodeInvalid     = "invalid"     // malformed request, bad identity, bad times
	CodeNoCapacity  = "no-capacity" // the site does not have the processors asked for
	CodeTooLong     = "too-long"    // duration over the configured maximum
	CodeInPast      = "in-past"     // start time already passed
	CodeSchedulerEr = "scheduler"   // Maui refused or failed
	CodeNotFound    = "not-found"   // nothing to release / unknown job
	CodeForbidden   = "forbidden"   // identity not allowed
	CodeOverBudget  = "over-budget" // job's worst-case cost exceeds the budget left
	CodeQueueFull   = "queue-full"  // the user or account has as many active grid jobs as allowed
	CodeInternal    = "internal"    // the machinery failed
	CodeExpired     = "expired"     // the request waited at the site longer than its timeout; nothing was done
	CodeConflict    = "conflict"    // the job already holds a different reservation at the site; nothing was done (the broker releases it)
)

// Identity is what the ACL of a grid job's reservation matches: plain names
// only (see forecast.IsPlainName).
type Identity struct {
	User    string `json:"user,omitempty"`
	Group   string `json:"group,omitempty"`
	Account string `json:"account,omitempty"`
}

// NodeProcs is a processor count on one named node.
type NodeProcs struct {
	Node  string `json:"node"`
	Procs int    `json:"procs"`
}

// ReserveRequest asks one site to protect a grid job's part with a
// reservation. Revision is the forecast Seq the plan was made on. Either
// Nodes (exact per-node counts) or Procs (a count for the site) is set.
// Retrying with the same Job is a no-op on the agent.
//
// Timing (TimeoutMS, SentMS, ClockOffsetMS) says until when the sender
// waits for the answer: see Timing. DeadlineMS is what brokers before
// TimeoutMS sent: the instant the sender stopped waiting, on the sender's
// wall clock. Agents read it but no longer use it: compared with the
// site's clock it refused every request on a site running a few seconds
// ahead. A request with neither is served without a deadline (the broker
// releases a site whose answer it did not get in time).
type ReserveRequest struct {
	Type        string      `json:"type"`
	Job         string      `json:"job"`
	Site        string      `json:"site"`
	Revision    uint64      `json:"revision"`
	Start       int64       `json:"start"`
	Duration    int64       `json:"duration"`
	Nodes       []NodeProcs `json:"nodes,omitempty"`
	Procs       int         `json:"procs,omitempty"`
	Identity    Identity    `json:"identity"`
	RequestedBy string      `json:"requested_by,omitempty"`
	Timing
	DeadlineMS int64 `json:"deadline_ms,omitempty"`
	// Epoch is the sending broker's term (wire/ha.go); 0 from brokers
	// before epochs. An agent refuses an epoch older than its highest.
	Epoch uint64 `json:"epoch,omitempty"`
	// Bind, on a repair (audit --repair re-requesting a missing
	// reservation), is the binding account the job's parts were told
	// (SubmitAccount of the reservation the broker recorded): the site
	// re-creates the reservation bound to it, so a part already queued
	// with it still gets in. Empty on a first reserve. Sites without
	// binding accounts (Slurm) ignore it.
	Bind string `json:"bind,omitempty"`
}

// SubmitAccount is the account a reservation's parts are charged to,
// read from its submit options ("-A la.acct0 -W ..."); "" when none.
func SubmitAccount(submit string) string {
	f := strings.Fields(submit)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "-A" {
			return f[i+1]
		}
	}
	return ""
}

// Timing is when a request that changes a site (reserve, release,
// dispatch, stop) stops being wanted (docs/formats.md, "Request
// deadlines"). An agent answers CodeExpired and does nothing once either
// rule says the sender stopped waiting:
//
//   - TimeoutMS after the request reached the agent, on the agent's own
//     monotonic clock (no two hosts' clocks are compared). Brokers send a
//     little less than they wait, so the expired answer reaches them.
//   - TimeoutMS after SentMS, the sender's clock when it sent the request
//     (Unix milliseconds), moved to the site's clock by ClockOffsetMS (the
//     site's clock minus the sender's, as the broker measures it from the
//     site's forecasts and heartbeats), with a tolerance for that
//     measure: a request that waited unread at the site (a stopped agent,
//     a stalled link) is refused when it is finally read.
//
// Zero fields are absent: without TimeoutMS there is no deadline; without
// SentMS only the first rule applies (older brokers, simulated clocks, a
// site whose offset the broker has not measured).
type Timing struct {
	TimeoutMS     int64 `json:"timeout_ms,omitempty"`
	SentMS        int64 `json:"sent_ms,omitempty"`
	ClockOffsetMS int64 `json:"clock_offset_ms,omitempty"`
}

// Reservation is one advance reservation a site holds for a grid job.
type Reservation struct {
	ID       string      `json:"id"`
	Job      string      `json:"job"`
	Site     string      `json:"site,omitempty"`
	Start    int64       `json:"start"`
	End      int64       `json:"end"`
	Nodes    []NodeProcs `json:"nodes"`
	Identity Identity    `json:"identity"`
	// Submit is what the grid job's part must add to qsub to run inside
	// the reservation, e.g. "-A acct -W x=FLAGS:ADVRES:g17.0".
	Submit string `json:"submit,omitempty"`
	// Extra is what the site's scheduler lists on the reservation that
	// lookahead never sets ("flag MAGNETIC", "partition short": on a
	// Slurm site): a reservation as made has none, so any is an ACL wider
	// than asked (audited as drifted, field acl).
	Extra []string `json:"extra,omitempty"`
	// CoresUnknown says the site lists the reservation's nodes and its
	// total processors but not yet how many on each node (Slurm prints no
	// CoreIDs for a while after a core reservation over several nodes is
	// made): Nodes then spread the total evenly, and only the node set
	// and the total compare (SameNodes).
	CoresUnknown bool `json:"cores_unknown,omitempty"`
}

// ReserveReply is an agent's answer. Code is CodeOK when Reservations hold
// the job's part; CodeStale carries the site's current Revision.
type ReserveReply struct {
	Type         string        `json:"type"`
	Job          string        `json:"job"`
	Site         string        `json:"site"`
	Code         string        `json:"code"`
	Message      string        `json:"message,omitempty"`
	Revision     uint64        `json:"revision,omitempty"`
	Reservations []Reservation `json:"reservations,omitempty"`
}

// ReleaseRequest asks a site to release every reservation of Job.
// Idempotent: releasing what does not exist succeeds with a note.
type ReleaseRequest struct {
	Type        string `json:"type"`
	Job         string `json:"job"`
	Site        string `json:"site"`
	Reason      string `json:"reason,omitempty"`
	RequestedBy string `json:"requested_by,omitempty"`
	Epoch       uint64 `json:"epoch,omitempty"` // as in ReserveRequest
	Timing
}

// ReleaseReply lists what was released; Note says when there was nothing.
type ReleaseReply struct {
	Type     string   `json:"type"`
	Job      string   `json:"job"`
	Site     string   `json:"site"`
	Code     string   `json:"code"`
	Released []string `json:"released,omitempty"`
	Note     string   `json:"note,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// ListRequest asks a site for its lookahead reservations, read from Maui.
type ListRequest struct {
	Type string `json:"type"`
}

// ListReply is a site's lookahead reservations as Maui reports them.
type ListReply struct {
	Type         string        `json:"type"`
	Site         string        `json:"site"`
	Code         string        `json:"code"`
	Message      string        `json:"message,omitempty"`
	Reservations []Reservation `json:"reservations"`
}

// AuditRecord is one entry of the audit trail: who asked what, when, under
// which ACL, what ran, and what came of it.
type AuditRecord struct {
	Type     string   `json:"type"`
	Time     int64    `json:"time"`
	Origin   string   `json:"origin"` // site name or "broker"
	Action   string   `json:"action"` // reserve, release, commit, rollback, charge, refund, ...
	Job      string   `json:"job,omitempty"`
	Site     string   `json:"site,omitempty"`
	Actor    string   `json:"actor,omitempty"` // who asked
	Identity Identity `json:"identity,omitempty"`
	Command  []string `json:"command,omitempty"` // exact argument vector run, if any
	Code     string   `json:"code"`
	Message  string   `json:"message,omitempty"`
	Detail   any      `json:"detail,omitempty"`
	// Mismatch is set by readers, never by writers: the record's body
	// disagrees with its subject, which the server's permissions bind to
	// the publisher. Origin (and, for a site's record, Site) are then the
	// subject's, and Mismatch says what the body claimed.
	Mismatch string `json:"mismatch,omitempty"`
}

// JobEvent is what a site saw of a grid job's part.
type JobEvent struct {
	Type  string `json:"type"`
	Site  string `json:"site"`
	Job   string `json:"job"`
	State string `json:"state"` // started, finished, failed; lost, foreign, rebound (notices)
	Time  int64  `json:"time"`
	// What the batch system says of a dispatched part, when known: its
	// local job id, real start and end, exit status (nil: not ended, or
	// deleted before it ran) and why it failed.
	LocalID    string `json:"local_id,omitempty"`
	Start      int64  `json:"start,omitempty"`
	End        int64  `json:"end,omitempty"`
	ExitStatus *int   `json:"exit_status,omitempty"`
	Message    string `json:"message,omitempty"`
	// Output and Error, on the event of a part that ended, are where its
	// stdout and stderr are: found by the site on the host they are
	// delivered to, at the -o/-e paths or where the batch system left
	// them; "" when not found (Message says where it looked).
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	// Until, on a "foreign" event (a local job that is not the part runs
	// in the job's reservation), is the latest time that job leaves: its
	// start plus its walltime limit. The part's processors are taken
	// until then.
	Until int64 `json:"until,omitempty"`
	// Reservations, on a "rebound" event (the site re-created the job's
	// reservations there after a scheduler restart, bound to another
	// account than the parts were told: the old one is taken), are the
	// job's reservations there now, with the submit options that get in.
	Reservations []Reservation `json:"reservations,omitempty"`
}

// JobEventAck is the broker's answer to a job event sent as a request:
// CodeOK when the event is recorded or needs no recording (a duplicate,
// an unknown job), CodeInternal when it could not be recorded now (the
// site sends it again), CodeInvalid when it is refused (never resent).
type JobEventAck struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

// Heartbeat is published on a site's forecast subject (header HeaderType =
// TypeHeartbeat, JSON body) instead of a forecast identical to the last
// one: it proves the site is alive and says its forecast revision (Seq)
// still holds.
type Heartbeat struct {
	Type      string `json:"type"`
	Site      string `json:"site"`
	Seq       uint64 `json:"seq"`
	Generated int64  `json:"generated"`
	// Offline says the agent is stopping (a clean stop): its site leaves
	// planning now instead of after the broker's site TTL, until its next
	// forecast.
	Offline bool `json:"offline,omitempty"`
	// Problem says the agent cannot build a forecast now (its scheduler
	// does not answer: slurmctld or munged down, pbs_server unreachable):
	// its site leaves planning now, with this reason shown, until its next
	// forecast, which the agent publishes in full once it can.
	Problem string `json:"problem,omitempty"`
}

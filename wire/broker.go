package wire

import (
	"fmt"

	"lookahead/forecast"
)

// Broker endpoint messages (the grid queue, the plan, sites, audit).
const (
	TypeSubmit      = "submit.v1"
	TypeSubmitReply = "submit-reply.v1"
	TypeCancel      = "cancel.v1"
	TypeCancelReply = "cancel-reply.v1"
	TypeStatus      = "status.v1"
	TypeStatusReply = "status-reply.v1"
	TypePlan        = "plan.v1"
	TypeSites       = "sites.v1"
	TypeSitesReply  = "sites-reply.v1"
	TypeAuditReq    = "audit-request.v1"
	TypeAuditReport = "audit-report.v1"
)

// More broker verbs and subjects.
const (
	VerbAudit = "audit"

	// BrokerUserSubjectT is the form of the submit and cancel endpoints:
	// verb, then the NATS user the request comes from. The server's
	// permissions let each user publish only on its own token, so the broker
	// learns a trusted identity from the subject (see docs/broker.md).
	BrokerUserSubjectT = "lookahead.broker.%s.%s"

	// PlanSubject carries every planning cycle's plan (a Plan) as it is
	// made, for live watchers; the latest is also served by VerbPlan.
	PlanSubject = "lookahead.plan"

	// BrokerEventSubjectT carries the broker's job events (submitted,
	// reserved, rolled back, ...) for live watchers: the event kind.
	BrokerEventSubjectT = "lookahead.events.%s"
	BrokerEventSubjects = "lookahead.events.>"

	// AuditOriginBroker is the origin of the broker's audit records.
	AuditOriginBroker = "broker"
)

// BrokerUserSubject is the subject user sends verb (submit, cancel) on.
func BrokerUserSubject(verb, user string) string {
	return fmt.Sprintf(BrokerUserSubjectT, verb, user)
}

// BrokerEventSubject is the subject the broker announces events of kind on.
func BrokerEventSubject(kind string) string { return fmt.Sprintf(BrokerEventSubjectT, kind) }

// Grid job states as the broker reports them.
const (
	JobWaiting    = "waiting"    // in the queue, planned or not
	JobCommitting = "committing" // reserve requests are out
	JobReserved   = "reserved"   // reservations hold on every involved site
	JobRunning    = "running"    // a site reported the job started
	JobFinished   = "finished"
	JobFailed     = "failed"
	JobCancelled  = "cancelled"
	JobExpired    = "expired" // reserved, but never showed up before the reservation ended
)

// HoldsReservations reports whether a job in state keeps its
// reservations (the others have released them or owe the release).
func HoldsReservations(state string) bool {
	switch state {
	case JobCommitting, JobReserved, JobDispatched, JobRunning:
		return true
	}
	return false
}

// SubmitRequest adds a grid job to the queue. RequestID is chosen by the
// client and reused on retries: a retried submission creates one job.
type SubmitRequest struct {
	Type      string              `json:"type"`
	RequestID string              `json:"request_id"`
	Job       forecast.JobRequest `json:"job"`
	// Script, when set, is what runs: the broker dispatches one part per
	// site into the job's reservations (at most MaxScriptBytes).
	Script []byte `json:"script,omitempty"`
}

// SubmitReply carries the job id, or a refusal Code (invalid, forbidden,
// over-budget). Duplicate is set when RequestID was seen before.
type SubmitReply struct {
	Type      string `json:"type"`
	Code      string `json:"code"`
	Message   string `json:"message,omitempty"`
	Job       string `json:"job,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
	// WorstCost is max_price × procs × walltime in credits, held against
	// the budget until the job is reserved.
	WorstCost float64 `json:"worst_cost,omitempty"`
}

// CancelRequest removes a job from the queue or releases its reservations.
type CancelRequest struct {
	Type string `json:"type"`
	Job  string `json:"job"`
}

// CancelReply says what cancelling did.
type CancelReply struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
	Job     string `json:"job,omitempty"`
	State   string `json:"state,omitempty"`
}

// StatusRequest asks for one job (Job set) or a page of the queue: the
// jobs the asker may see, in submission order, after the cursor After.
type StatusRequest struct {
	Type string `json:"type"`
	Job  string `json:"job,omitempty"`
	// All includes finished, failed, cancelled and expired jobs (those
	// still within the broker's retention).
	All bool `json:"all,omitempty"`
	// After is the cursor: a previous reply's Next (0: from the start).
	After uint64 `json:"after,omitempty"`
	// Limit asks for at most this many jobs (the broker caps a page by
	// count and by encoded size, so a reply always fits in one message).
	Limit int `json:"limit,omitempty"`
}

// JobStatus is the broker's view of one grid job.
type JobStatus struct {
	Job   forecast.JobRequest `json:"job"`
	State string              `json:"state"`
	// Criterion is the criterion the broker plans the job with: the
	// request's own, else the broker's planning.criterion (brokers before
	// this field omit it).
	Criterion string `json:"criterion,omitempty"`
	// Plan is the last cycle's allocation (waiting jobs) or the reserved one.
	Plan         *forecast.Allocation `json:"plan,omitempty"`
	Reservations []Reservation        `json:"reservations,omitempty"`
	Cost         float64              `json:"cost,omitempty"`
	WorstCost    float64              `json:"worst_cost,omitempty"`
	Actor        string               `json:"actor,omitempty"`
	Updated      int64                `json:"updated"`
	Message      string               `json:"message,omitempty"`
	Attempts     int                  `json:"attempts,omitempty"`
	// ScriptBytes is the size of the job's script (0: parts are submitted
	// by hand); Parts are the dispatched parts, in part order.
	ScriptBytes int          `json:"script_bytes,omitempty"`
	Parts       []PartStatus `json:"parts,omitempty"`
	// Releasing lists the sites that still owe the release of the job's
	// reservations (the broker retries until they confirm), sorted.
	Releasing []string `json:"releasing,omitempty"`
	// Started is when the job started, by the broker's clock: the first
	// report of a site that its part started (0: not started, or brokers
	// before this field).
	Started int64 `json:"started,omitempty"`
	// Queue is where a waiting job stood in the last cycle's queue
	// (brokers before this field omit it).
	Queue *QueuePlace `json:"queue,omitempty"`
}

// QueuePlace is a waiting job's place in the queue the broker plans in:
// Position of Of (1 is planned first), in the named order (price: max
// price, then submit time; fcfs: submit time; aging: submit time moved
// earlier by the broker's aging per credit of max price).
type QueuePlace struct {
	Position int    `json:"position"`
	Of       int    `json:"of"`
	Order    string `json:"order"`
}

// StatusReply lists jobs, in submission order. Next, when not 0, is the
// cursor of the next page: ask again with After = Next.
type StatusReply struct {
	Type    string      `json:"type"`
	Code    string      `json:"code"`
	Message string      `json:"message,omitempty"`
	Now     int64       `json:"now"`
	Jobs    []JobStatus `json:"jobs"`
	Next    uint64      `json:"next,omitempty"`
	// Leader is the active broker that answered (wire/ha.go); absent
	// from brokers before leadership.
	Leader *Leadership `json:"leader,omitempty"`
}

// Plan is one planning cycle's result: the allocation of every waiting job
// (or why it did not fit), over the forecasts of the Sites it used.
type Plan struct {
	Type  string   `json:"type"`
	Cycle uint64   `json:"cycle"`
	Time  int64    `json:"time"`
	Sites []string `json:"sites"`
	Stale []string `json:"stale,omitempty"`
	// Excluded lists sites left out because their latest forecast was
	// refused (see SiteStatus.Problem).
	Excluded    []string              `json:"excluded,omitempty"`
	Allocations []forecast.Allocation `json:"allocations"`
	// Commit lists the jobs this cycle started reserving.
	Commit []string `json:"commit,omitempty"`
	// Micros is how long planning took, in microseconds.
	Micros int64 `json:"micros"`
	// Order is the queue order the broker plans in (QueuePlace's Order):
	// Allocations are in it. Absent from brokers before this field.
	Order string `json:"order,omitempty"`
	// Total is how many allocations the whole plan has. A plan too big
	// for one NATS message is sent in pages: Allocations are those from
	// the request's After on, as many as fit, and Next is where the next
	// page starts (ask again with After = Next; 0: this page ends the
	// plan). The plan published on PlanSubject is its first page. Absent
	// from brokers before paging (their plan is always whole).
	Total int `json:"total,omitempty"`
	Next  int `json:"next,omitempty"`
	// Code and Message are set when a plan request is refused
	// (CodeInvalid: a malformed request); absent otherwise.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// PlanRequest asks for the broker's last plan, a page at a time (see
// Plan.Next). An empty request, or one of only its type, asks for the
// first page, as brokers before paging were asked for the whole plan.
type PlanRequest struct {
	Type string `json:"type"`
	// After is the index of the first allocation wanted: a previous
	// page's Next (0: from the start).
	After int `json:"after,omitempty"`
}

// SiteStatus is what the broker knows of one site.
type SiteStatus struct {
	Site      string `json:"site"`
	Seq       uint64 `json:"seq"`
	Generated int64  `json:"generated"`
	// LastSeen is 0 (and Age 0) when the broker never took a forecast of
	// the site (e.g. its only forecast was refused).
	LastSeen int64 `json:"last_seen"`
	Age      int64 `json:"age"`
	Horizon  int64 `json:"horizon"`
	Nodes    int   `json:"nodes"`
	Procs    int   `json:"procs"`
	Slots    int   `json:"slots"`
	// FreeProcHours is the processor-hours of slots between now and the
	// horizon.
	FreeProcHours float64 `json:"free_proc_hours"`
	// Stale: out of planning (silent longer than the TTL, or excluded).
	Stale bool `json:"stale"`
	// ClockOffset is the site's clock minus the broker's, seconds, at the
	// site's last message.
	ClockOffset int64 `json:"clock_offset"`
	// Problem says why the site's latest message was refused. Excluded is
	// set when the site is out of planning whatever its forecast's age:
	// its latest forecast was refused (until a good one arrives), or it
	// does not answer its requests (Unanswered says why, since
	// UnansweredSince; until it answers again).
	Problem         string `json:"problem,omitempty"`
	Excluded        bool   `json:"excluded,omitempty"`
	Unanswered      string `json:"unanswered,omitempty"`
	UnansweredSince int64  `json:"unanswered_since,omitempty"`
	// Offline: the site's agent said it stopped or cannot forecast
	// (Problem says which); out of planning until its next forecast.
	Offline bool `json:"offline,omitempty"`
	// RunsParts is what the site's latest forecast says of its agent:
	// true, it runs grid jobs' parts (dispatch on); false, it does not,
	// and jobs with a script are not planned there; absent, it does not
	// say (an older agent: planned as if it did). docs/formats.md, "Sites
	// that run parts".
	RunsParts *bool `json:"runs_parts,omitempty"`
}

// SitesReply lists every site the broker has a forecast of.
type SitesReply struct {
	Type  string       `json:"type"`
	Code  string       `json:"code"`
	Now   int64        `json:"now"`
	TTL   int64        `json:"ttl"`
	Sites []SiteStatus `json:"sites"`
	// Leader is the active broker that answered (as in StatusReply).
	Leader *Leadership `json:"leader,omitempty"`
}

// AuditRequest asks the broker to compare its records with every site's
// real reservations; Repair releases orphans and re-requests missing ones.
type AuditRequest struct {
	Type   string `json:"type"`
	Repair bool   `json:"repair,omitempty"`
}

// Kinds of audit findings.
const (
	DriftMissing  = "missing"  // the broker believes in it, the site does not have it
	DriftOrphaned = "orphaned" // the site has it, the broker does not know it
	DriftDrifted  = "drifted"  // both know it, but times, nodes or ACL differ
)

// AuditFinding is one difference between the broker and a site.
type AuditFinding struct {
	Kind        string       `json:"kind"`
	Site        string       `json:"site"`
	Job         string       `json:"job,omitempty"`
	Reservation string       `json:"reservation,omitempty"`
	Fields      []string     `json:"fields,omitempty"` // drifted: start, end, nodes, acl
	Broker      *Reservation `json:"broker,omitempty"`
	Actual      *Reservation `json:"actual,omitempty"`
	Repair      string       `json:"repair,omitempty"` // what --repair did
	// RepairCode is the outcome of --repair: RepairDone, RepairRefused,
	// RepairReported or RepairFailed.
	RepairCode string `json:"repair_code,omitempty"`
}

// Outcomes of repairing one audit finding.
const (
	RepairDone     = "repaired"
	RepairRefused  = "refused"  // the site, or the broker's rules, said no
	RepairReported = "reported" // drifted: reported, never repaired
	RepairFailed   = "failed"   // the machinery failed (no answer, not recorded)
)

// AuditReport is the result of an audit.
type AuditReport struct {
	Type     string         `json:"type"`
	Code     string         `json:"code"`
	Message  string         `json:"message,omitempty"`
	Time     int64          `json:"time"`
	Sites    []string       `json:"sites"`
	Errors   []string       `json:"errors,omitempty"` // sites that did not answer
	Checked  int            `json:"checked"`
	Findings []AuditFinding `json:"findings"`
}

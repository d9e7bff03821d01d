package wire

// Active and standby brokers (docs/broker.md, "Active and standby
// brokers"). One broker at a time is active: it holds the lease in
// LeaderBucket and serves the grid's endpoints; the others wait. Each
// active term has an epoch, which every reserve, release, dispatch and
// stop request carries (their Epoch field): an agent refuses a request
// whose epoch is older than the highest it has seen with CodeFenced.
const (
	// LeaderBucket is the KV bucket of the brokers' leadership lease: one
	// key, LeaderKey, whose entries expire after the bucket's TTL.
	LeaderBucket = "lookahead-brokers"
	LeaderKey    = "leader"
	// JobEpochSubject carries, in the job stream, the record a new active
	// broker appends to begin its term; its stream sequence is the epoch.
	JobEpochSubject = "lookahead.jobs.$epoch"
	// BrokerHASubject is answered by every broker, active or standby,
	// with its own HAStatus (no queue group: a request gathers them all).
	BrokerHASubject = "lookahead.broker.ha"
	// VerbStepDown asks the active broker to hand over (operators only).
	VerbStepDown = "step-down"

	TypeHAStatus    = "broker-ha.v1"
	TypeStepDown    = "step-down.v1"
	TypeStepDownRep = "step-down-reply.v1"

	// CodeFenced: the request carried an older epoch than one the site has
	// seen; it comes from a broker that is no longer active. Nothing was done.
	CodeFenced = "fenced"

	RoleActive  = "active"
	RoleStandby = "standby"
)

// Leadership says which broker is active, its epoch and since when (Unix
// seconds). Replies that carry it (status, sites) name the broker that
// answered; `lookahead-broker status` asks every broker.
type Leadership struct {
	Broker string `json:"broker"`
	Epoch  uint64 `json:"epoch"`
	Since  int64  `json:"since"`
}

// HAStatus is one broker's own view: its role, and the lease as it last
// read it (Leader, nil when nobody holds it).
type HAStatus struct {
	Type     string      `json:"type"`
	Name     string      `json:"name"`
	Role     string      `json:"role"`
	Epoch    uint64      `json:"epoch,omitempty"`
	Since    int64       `json:"since,omitempty"`
	Leader   *Leadership `json:"leader,omitempty"`
	LeaseTTL int64       `json:"lease_ttl_ms,omitempty"`
	Message  string      `json:"message,omitempty"`
}

// StepDownRequest asks the active broker of term Epoch to give up its
// lease; a standby takes over. The broker that stepped down becomes a
// standby. A broker refuses a request that names another epoch (a
// repeated request must not depose the successor) or none.
type StepDownRequest struct {
	Type   string `json:"type"`
	Reason string `json:"reason,omitempty"`
	Epoch  uint64 `json:"epoch,omitempty"`
}

// StepDownReply says whether the broker stepped down, from which epoch.
type StepDownReply struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Broker  string `json:"broker"`
	Epoch   uint64 `json:"epoch,omitempty"`
	Message string `json:"message,omitempty"`
}

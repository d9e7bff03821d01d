package forecast

// Snapshot is a cluster's state at one instant, as the Torque adapter reads
// it (qstat -f -x, pbsnodes -x) and the forecasters consume it. Times are Unix
// seconds, durations seconds. The JSON form is what `lookahead forecast
// --snapshot` reads.
type Snapshot struct {
	Site  string         `json:"site"`
	Taken int64          `json:"taken"`
	Nodes []SnapshotNode `json:"nodes"`
	Jobs  []LocalJob     `json:"jobs"`
	// Reservations are advance reservations in force (grid jobs' holds):
	// their processors are neither offered as slots nor used by local jobs
	// that are not bound to them.
	Reservations []Reservation `json:"reservations,omitempty"`
}

// Reservation holds processors on nodes over [Start, End) for one grid job
// (Job, the grid job id), or for whoever else the site reserved them
// (Job empty: an admin's reservation); ID is the scheduler's name for it.
// Standing marks an instance of a standing reservation (Maui SRCFG).
type Reservation struct {
	ID       string      `json:"id"`
	Job      string      `json:"job,omitempty"`
	Start    int64       `json:"start"`
	End      int64       `json:"end"`
	Hosts    []HostProcs `json:"hosts"`
	Standing bool        `json:"standing,omitempty"`
}

// Node states as pbsnodes reports them; a node may have several at once
// ("down,offline").
const (
	NodeFree         = "free"
	NodeJobExclusive = "job-exclusive"
	NodeJobSharing   = "job-sharing"
	NodeBusy         = "busy"
	NodeDown         = "down"
	NodeOffline      = "offline"
	NodeUnknown      = "state-unknown"
)

// SnapshotNode is one node of the cluster. Speed is relative to the
// reference CPU and comes from the agent's config (Torque does not know it).
type SnapshotNode struct {
	Name     string   `json:"name"`
	Procs    int      `json:"procs"`
	State    []string `json:"state"`
	Speed    float64  `json:"speed"`
	MemMB    int64    `json:"mem_mb,omitempty"`
	Features []string `json:"features,omitempty"`
	Note     string   `json:"note,omitempty"`
	// Jobs are the jobs pbsnodes lists on the node, with the processor
	// indexes each holds (may include jobs that already completed).
	Jobs []NodeJob `json:"jobs,omitempty"`
}

// Usable reports whether the node can run jobs: it is neither down, offline
// nor in an unknown state.
func (n SnapshotNode) Usable() bool {
	for _, s := range n.State {
		switch s {
		case NodeDown, NodeOffline, NodeUnknown:
			return false
		}
	}
	return n.Procs > 0
}

// OfferedNodes lists the usable nodes of a snapshot as a forecast offers
// them to the grid (speed 1, the reference CPU, when the snapshot does not
// know it).
func OfferedNodes(nodes []SnapshotNode) []Node {
	out := make([]Node, 0, len(nodes))
	for _, n := range nodes {
		if !n.Usable() {
			continue
		}
		speed := n.Speed
		if speed <= 0 {
			speed = 1
		}
		out = append(out, Node{Name: n.Name, Procs: n.Procs, Speed: speed, MemMB: n.MemMB, Features: plainOnly(n.Features)})
	}
	return out
}

// plainOnly is the features a grid job can name (plain names): a site's
// feature that is not one (a Torque property with odd characters) is
// left out of the forecast rather than making it invalid.
func plainOnly(features []string) []string {
	for _, f := range features {
		if !IsPlainName(f) {
			out := make([]string, 0, len(features))
			for _, g := range features {
				if IsPlainName(g) {
					out = append(out, g)
				}
			}
			return out
		}
	}
	return features
}

// Local job states (Torque's one-letter job_state).
const (
	JobQueued    = "Q"
	JobRunning   = "R"
	JobHeld      = "H"
	JobWaiting   = "W"
	JobExiting   = "E"
	JobCompleted = "C"
	JobTransit   = "T"
	JobSuspended = "S"
)

// HostProcs is a number of processors held (or to be held) on one node.
type HostProcs struct {
	Node  string `json:"node"`
	Procs int    `json:"procs"`
}

// LocalJob is a job of the cluster's owners. Procs is the total processors
// requested; Nodes/PPN keep the request's shape when it was nodes=N:ppn=K
// (0 when unknown). Hosts is where a running job runs (exec_host, folded per
// node). Started is 0 for a job that has not started. Walltime is the
// requested limit in seconds (0 when none was requested). Features are the
// node features (Torque's node properties) every node of the job must have,
// empty when it asks for none.
type LocalJob struct {
	ID        string      `json:"id"`
	Name      string      `json:"name,omitempty"`
	User      string      `json:"user,omitempty"`
	Group     string      `json:"group,omitempty"`
	Account   string      `json:"account,omitempty"`
	Queue     string      `json:"queue,omitempty"`
	QOS       string      `json:"qos,omitempty"`
	State     string      `json:"state"`
	Procs     int         `json:"procs"`
	Nodes     int         `json:"nodes,omitempty"`
	PPN       int         `json:"ppn,omitempty"`
	MemMB     int64       `json:"mem_mb,omitempty"`
	Walltime  int64       `json:"walltime"`
	Used      int64       `json:"walltime_used,omitempty"`
	Submitted int64       `json:"submitted"`
	Started   int64       `json:"started,omitempty"`
	Priority  int64       `json:"priority,omitempty"`
	Hosts     []HostProcs `json:"hosts,omitempty"`
	Features  []string    `json:"features,omitempty"`
	// Reservation names the advance reservation the job is bound to
	// (FLAGS:ADVRES), empty when none.
	Reservation string `json:"reservation,omitempty"`
}

// KnownState reports whether the job's state is one of Torque's
// (Q, R, H, W, E, C, T, S). A forecaster treats a job in any other state
// as holding its processors (the conservative reading) and says so.
func (j LocalJob) KnownState() bool {
	switch j.State {
	case JobQueued, JobRunning, JobHeld, JobWaiting, JobExiting, JobCompleted, JobTransit, JobSuspended:
		return true
	}
	return false
}

// Running reports whether the job holds processors now (R, E or S).
func (j LocalJob) Running() bool {
	return j.State == JobRunning || j.State == JobExiting || j.State == JobSuspended
}

// Waiting reports whether the job waits to be started by the scheduler (Q).
// Held (H) and waiting-for-time (W) jobs are not eligible.
func (j LocalJob) Waiting() bool { return j.State == JobQueued }

// Prediction is where and when a forecaster expects a local job to run.
type Prediction struct {
	Job   string      `json:"job"`
	Start int64       `json:"start"`
	End   int64       `json:"end"`
	Hosts []HostProcs `json:"hosts"`
}

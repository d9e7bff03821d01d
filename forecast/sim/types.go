package sim

import "lookahead/forecast"

// Cluster is the machine an Engine simulates: its nodes (name, processors,
// state). Nodes that are not Usable (down, offline, unknown) run nothing.
// Site names the cluster in snapshots.
type Cluster struct {
	Site  string
	Nodes []forecast.SnapshotNode
}

// PoolCluster is a cluster of n single-processor nodes p0001…, the model of
// an SWF replay with --procs n.
func PoolCluster(n int) Cluster {
	return UniformCluster(n, 1)
}

// UniformCluster is a cluster of n nodes with ppn processors each, named
// n0001… (the SWF replay's --nodes N --ppn K).
func UniformCluster(n, ppn int) Cluster {
	c := Cluster{Nodes: make([]forecast.SnapshotNode, n)}
	for i := range c.Nodes {
		c.Nodes[i] = forecast.SnapshotNode{Name: nodeName(i + 1), Procs: ppn, State: []string{forecast.NodeFree}, Speed: 1}
	}
	return c
}

func nodeName(i int) string {
	const digits = "0123456789"
	b := []byte("n0000")
	for k := 4; k > 0 && i > 0; k-- {
		b[k] = digits[i%10]
		i /= 10
	}
	if i > 0 { // more than 9999 nodes
		return "n" + itoa(i) + string(b[1:])
	}
	return string(b)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	k := len(b)
	for i > 0 {
		k--
		b[k] = byte('0' + i%10)
		i /= 10
	}
	return string(b[k:])
}

// Job is a local job as the simulator sees it. Procs is the processors
// asked for; when PPN > 0 the job wants Procs/PPN whole chunks of PPN
// processors, each on one node (Torque's nodes=N:ppn=K), otherwise its
// processors may be spread over nodes in any way (Maui tasks, TPN 0).
// Walltime is the requested limit (> 0); Runtime is how long the job would
// run unhindered: the job ends after min(Runtime, Walltime); a Runtime < 0
// means "runs its full walltime". Submit is when the job enters the queue.
// A higher Priority goes first.
type Job struct {
	ID       string
	Procs    int
	PPN      int
	Walltime int64
	Runtime  int64
	Submit   int64
	Priority int64
	Queue    string
	User     string
	Group    string
	Account  string
	QOS      string
	// Features are the node features the job asks for (Torque's
	// nodes=…:feature, the trace's [a][b]): it runs only on nodes with all
	// of them. Empty: any node.
	Features []string
}

// EventKind says what happened to a job.
type EventKind string

// Event kinds.
const (
	Started  EventKind = "started"
	Ended    EventKind = "ended"
	Rejected EventKind = "rejected"
)

// Event is one thing that happened at Time: a job started (Hosts, Start,
// End = Start + min(runtime, walltime)), ended, or was rejected (Reason).
type Event struct {
	Kind   EventKind
	Time   int64
	Job    string
	Start  int64
	End    int64
	Hosts  []forecast.HostProcs
	Reason string
}

// Capacity is the processors on the cluster's usable nodes.
func (c Cluster) Capacity() int {
	n := 0
	for _, nd := range c.Nodes {
		if nd.Usable() {
			n += nd.Procs
		}
	}
	return n
}

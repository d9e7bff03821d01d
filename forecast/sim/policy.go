package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Policy is the scheduling policy: Depth is Maui's RESERVATIONDEPTH, the
// number of blocked jobs (in queue order) that get a reservation each pass.
// Depth 0 means FCFS without backfill (the pass stops at the first job that
// does not fit), 1 is EASY backfilling, a negative Depth is unbounded
// (conservative backfilling).
//
// Poll > 0 makes the scheduler act only at origin + k·Poll (k >= 1, origin
// the engine's start), like Maui's RMPOLLINTERVAL in simulation: events are
// seen at the first iteration at or after they happen (a finished job
// holds its processors until then). Poll 0 is event-driven (Maui stepped
// exactly onto every event).
//
// The other fields are a site's Maui policy (ReadMauiConfig); their zero
// values are the simulator's defaults, not Maui's.
type Policy struct {
	Depth int
	Poll  int64
	// Reservation is RESERVATIONPOLICY.
	Reservation ReservationPolicy
	// Backfill is BACKFILLPOLICY; BackfillAuto is FIRSTFIT, or none with
	// Depth 0. BFMetric is BACKFILLMETRIC (BESTFIT's measure of a job),
	// BFDepth BACKFILLDEPTH (jobs tried per window, 0 all).
	Backfill BackfillPolicy
	BFMetric BackfillMetric
	BFDepth  int
	// NodeAlloc is NODEALLOCATIONPOLICY.
	NodeAlloc NodeAllocation
	// ExactNode is JOBNODEMATCHPOLICY EXACTNODE: a job with a nodes×ppn
	// shape gets its chunks on distinct nodes.
	ExactNode bool
	// Priority, when set, orders the queue by Maui's priority function,
	// recomputed at every pass (Job.Priority is then ignored); nil orders
	// by Job.Priority.
	Priority *Priority
	// Limits, when set, are the usage limits (USERCFG[...] MAXJOB= and
	// the like) a pass applies as Maui does; nil applies none.
	Limits *Limits
	// Standing, when set, are the standing reservations (SRCFG).
	Standing *Standing
	// QOS, when set, gives each job the QOS Maui would (QDEF=, QLIST=);
	// nil leaves Job.QOS as it is.
	QOS *QOSAccess
	// Fairshare, when set, is the site's fairshare (FSPOLICY and the
	// rest): usage accrues as the simulation runs and the priority
	// weighs it (fairshare.go); nil: none.
	Fairshare *Fairshare
	// Nodes, when set, is what NODECFG[...] adds to the nodes (features).
	Nodes *NodeConfig
}

// Standing is a site's standing reservations, their windows on the wall
// clock in Zone (nil: UTC), which is Maui's local time.
type Standing struct {
	Res  []StandingRes
	Zone *time.Location
}

// ReservationPolicy is Maui's RESERVATIONPOLICY.
type ReservationPolicy int

// Reservation policies. CurrentHighest (Maui's default) drops every
// reservation at each pass and makes them again for the highest jobs;
// Highest keeps a reservation until its job starts (making it again at
// each pass, possibly earlier) and counts it against the depth; Never
// makes none.
const (
	CurrentHighest ReservationPolicy = iota
	Highest
	NoReservations
)

// BackfillPolicy is Maui's BACKFILLPOLICY.
type BackfillPolicy int

// Backfill policies.
const (
	BackfillAuto BackfillPolicy = iota
	FirstFit
	BestFit
	NoBackfill
)

// BackfillMetric is Maui's BACKFILLMETRIC: what BESTFIT maximises.
type BackfillMetric int

// Backfill metrics.
const (
	MetricProcs BackfillMetric = iota
	MetricProcSeconds
	MetricSeconds
)

// NodeAllocation is Maui's NODEALLOCATIONPOLICY.
type NodeAllocation int

// Node allocation policies. MinResource takes nodes with the least memory
// first, the last listed first among equals; FirstAvailable takes them in
// listing order; LastAvailable (Maui's default) takes, for a job starting
// now, the nodes available longest first (the last listed first among
// equals) and, for a reservation, the last listed first.
const (
	MinResource NodeAllocation = iota
	FirstAvailable
	LastAvailable
	// NodePriority is PRIORITY: the nodes by NODECFG PRIORITY, highest
	// first, the list order among equals (nodefeat.go).
	NodePriority
)

// depth is the number of reservations a pass makes (0 none, < 0 all).
func (p Policy) depth() int {
	if p.Reservation == NoReservations || p.Backfill == NoBackfill {
		return 0 // Maui makes no priority reservation without backfill
	}
	return p.Depth
}

// backfills reports whether jobs may start past the first one that does
// not fit.
func (p Policy) backfills() bool {
	switch p.Backfill {
	case NoBackfill:
		return false
	case BackfillAuto:
		return p.Depth != 0
	}
	return true
}

// The named policies.
var (
	FCFS         = Policy{Depth: 0}
	EASY         = Policy{Depth: 1}
	Conservative = Policy{Depth: -1}
)

// ParsePolicy reads "fcfs", "easy", "conservative" or "depth=K" (K >= 0).
func ParsePolicy(s string) (Policy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "fcfs":
		return FCFS, nil
	case "easy", "":
		return EASY, nil
	case "conservative":
		return Conservative, nil
	}
	k, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(s)), "depth=")
	if !ok {
		return Policy{}, fmt.Errorf("policy %q: want fcfs, easy, conservative or depth=K", s)
	}
	n, err := strconv.Atoi(k)
	if err != nil || n < 0 {
		return Policy{}, fmt.Errorf("policy %q: depth must be an integer >= 0", s)
	}
	return Policy{Depth: n}, nil
}

// String names the policy the way ParsePolicy reads it (Poll is not part
// of the name).
func (p Policy) String() string {
	switch {
	case p.Depth == 0:
		return "fcfs"
	case p.Depth == 1:
		return "easy"
	case p.Depth < 0:
		return "conservative"
	}
	return "depth=" + strconv.Itoa(p.Depth)
}

func (p Policy) unbounded() bool { return p.depth() < 0 }

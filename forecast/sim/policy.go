package sim

import (
	"fmt"
	"strconv"
	"strings"
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
type Policy struct {
	Depth int
	Poll  int64
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

func (p Policy) unbounded() bool { return p.Depth < 0 }

package forecast

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every validation error, so callers can tell bad
// input from failed machinery with errors.Is. It says so itself too
// (BadInput), so the CLIs' exit codes (internal/cli, which imports nothing
// above it) find it without importing this package.
var ErrInvalid error = invalidInput{}

type invalidInput struct{}

func (invalidInput) Error() string { return "invalid input" }

// BadInput marks the error as the user's input being wrong, not the
// machinery failing: the CLIs exit 2.
func (invalidInput) BadInput() bool { return true }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// plainName is what an identity (user, group, account) or a site name may
// look like: no shell metacharacters, no spaces, no leading dash.
var plainName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

// IsPlainName reports whether s is a plain user, group, account or site
// name: 1–64 characters of letters, digits, '_', '.', '-', not starting with
// '-' or '.'.
func IsPlainName(s string) bool { return plainName.MatchString(s) }

func badFloat(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

// MaxUnmodelled bounds Forecast.Unmodelled.
const MaxUnmodelled = 256

// Validate checks a forecast against the v1 contract. Errors name the field
// and, for list items, the index.
func (f *Forecast) Validate() error {
	if f.Version != Version {
		return invalid("forecast version %d: only version %d is supported", f.Version, Version)
	}
	if !IsPlainName(f.Site) {
		return invalid("forecast site %q: must be a plain name", clipName(f.Site))
	}
	switch {
	case !inInstants(f.Generated):
		return invalid("forecast generated %d: must lie in [0, %d]", f.Generated, MaxInstant)
	case !inInstants(f.Horizon):
		return invalid("forecast horizon %d: must lie in [0, %d]", f.Horizon, MaxInstant)
	case f.Horizon < f.Generated:
		return invalid("forecast horizon %d is before generated %d", f.Horizon, f.Generated)
	}
	if !goodPrice(f.FreePrice) {
		return invalid("forecast free_price %v: must be a number in [0, %v]", f.FreePrice, MaxPrice)
	}
	if len(f.Unmodelled) > MaxUnmodelled {
		return invalid("unmodelled: %d lines, at most %d", len(f.Unmodelled), MaxUnmodelled)
	}
	for i, u := range f.Unmodelled {
		if len(u) > 512 || !utf8.ValidString(u) {
			return invalid("unmodelled[%d]: at most 512 bytes of UTF-8", i)
		}
	}
	nodes, err := f.nodeIndex()
	if err != nil {
		return err
	}
	for i, s := range f.Slots {
		if err := validateSlot(i, s, nodes); err != nil {
			return err
		}
	}
	return nil
}

// CheckCapacity refuses a valid forecast (Validate passed) whose slots
// of one node overlap in time and together offer more processors than
// the node has, as one slot larger than the node is refused: a planner
// would place more work there than fits. The decoders (DecodeForecast,
// wire's) and the agent before it publishes run it.
func (f *Forecast) CheckCapacity() error {
	nodes := make(map[string]Node, len(f.Nodes))
	for _, n := range f.Nodes {
		nodes[n.Name] = n
	}
	return f.checkCapacity(nodes)
}

// edge is a slot's start (+procs) or end (-procs) on its node.
type edge struct {
	t     int64
	d     int
	index int
}

// checkCapacity is CheckCapacity. A forecast lists a node's slots
// together (as the agents write them), or in any order (then they are
// grouped first).
func (f *Forecast) checkCapacity(nodes map[string]Node) error {
	var edges []edge
	seen := make(map[string]bool, len(nodes))
	for lo := 0; lo < len(f.Slots); {
		name := f.Slots[lo].Node
		hi := lo + 1
		for hi < len(f.Slots) && f.Slots[hi].Node == name {
			hi++
		}
		if seen[name] { // not grouped by node
			return f.checkCapacityGrouped(nodes)
		}
		seen[name] = true
		var err error
		if edges, err = f.nodeCapacity(nodes[name], edges[:0], lo, hi, nil); err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

func (f *Forecast) checkCapacityGrouped(nodes map[string]Node) error {
	byNode := make(map[string][]int, len(nodes))
	for i, s := range f.Slots {
		byNode[s.Node] = append(byNode[s.Node], i)
	}
	var edges []edge
	for _, n := range f.Nodes {
		var err error
		if edges, err = f.nodeCapacity(n, edges[:0], 0, 0, byNode[n.Name]); err != nil {
			return err
		}
	}
	return nil
}

// disjoint reports whether the slots of edges (start, end pairs) follow
// each other without overlapping, in order: nothing to add up.
func disjoint(edges []edge) bool {
	for k := 2; k < len(edges); k += 2 {
		if edges[k].t < edges[k-1].t {
			return false
		}
	}
	return true
}

// nodeCapacity sweeps node n's slots, f.Slots[lo:hi] or those at index,
// over time; edges is a buffer, returned for reuse.
func (f *Forecast) nodeCapacity(n Node, edges []edge, lo, hi int, index []int) ([]edge, error) {
	add := func(i int) {
		s := f.Slots[i]
		edges = append(edges, edge{s.Start, s.Procs, i}, edge{s.End, -s.Procs, i})
	}
	for i := lo; i < hi; i++ {
		add(i)
	}
	for _, i := range index {
		add(i)
	}
	if len(edges) <= 2 || disjoint(edges) {
		return edges, nil
	}
	slices.SortFunc(edges, func(a, b edge) int { // [start, end): an end frees before a start at the same time
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.d, b.d))
	})
	sum := 0
	for _, e := range edges {
		if sum += e.d; sum > n.Procs {
			return edges, invalid("slots[%d]: with the slots it overlaps at %d, node %q offers %d processors, it has %d",
				e.index, e.t, n.Name, sum, n.Procs)
		}
	}
	return edges, nil
}

func (f *Forecast) nodeIndex() (map[string]Node, error) {
	nodes := make(map[string]Node, len(f.Nodes))
	for i, n := range f.Nodes {
		switch {
		case n.Name == "":
			return nil, invalid("nodes[%d].name: empty", i)
		case len(n.Name) > MaxNodeNameBytes:
			return nil, invalid("nodes[%d].name: %d bytes, at most %d", i, len(n.Name), MaxNodeNameBytes)
		case !ValidNodeName(n.Name):
			return nil, invalid("nodes[%d].name %q: a host name has no spaces or control characters", i, clipName(n.Name))
		case n.Procs <= 0 || n.Procs > MaxProcs:
			return nil, invalid("nodes[%d].procs: %d, must lie in [1, %d]", i, n.Procs, MaxProcs)
		case !goodSpeed(n.Speed):
			return nil, invalid("nodes[%d].speed: %v, must lie in [%v, %v]", i, n.Speed, MinSpeed, MaxSpeed)
		case n.MemMB < 0 || n.MemMB > MaxMemMB:
			return nil, invalid("nodes[%d].mem_mb: %d, must lie in [0, %d]", i, n.MemMB, MaxMemMB)
		}
		if err := plainFeatures(n.Features, "nodes[%d].features", i); err != nil {
			return nil, err
		}
		if _, dup := nodes[n.Name]; dup {
			return nil, invalid("nodes[%d].name: duplicate node %q", i, n.Name)
		}
		nodes[n.Name] = n
	}
	return nodes, nil
}

func validateSlot(i int, s Slot, nodes map[string]Node) error {
	n, ok := nodes[s.Node]
	switch {
	case !ok:
		return invalid("slots[%d].node: unknown node %q", i, Clip(s.Node, MaxNodeNameBytes))
	case s.Procs <= 0:
		return invalid("slots[%d].procs: %d, must be > 0", i, s.Procs)
	case s.Procs > n.Procs:
		return invalid("slots[%d].procs: %d exceeds node %q capacity %d", i, s.Procs, s.Node, n.Procs)
	case !inInstants(s.Start):
		return invalid("slots[%d].start: %d, must lie in [0, %d]", i, s.Start, MaxInstant)
	case !inInstants(s.End):
		return invalid("slots[%d].end: %d, must lie in [0, %d]", i, s.End, MaxInstant)
	case s.End <= s.Start:
		return invalid("slots[%d].end: %d, must be after start %d", i, s.End, s.Start)
	case !goodPrice(s.Price):
		return invalid("slots[%d].price: %v, must be a number in [0, %v]", i, s.Price, MaxPrice)
	}
	return nil
}

// label names the job in messages: "job g12", or "job" before it has an id.
func (j *JobRequest) label() string {
	if j.ID == "" {
		return "job"
	}
	return "job " + j.ID
}

// Validate checks a job request against the v1 contract.
func (j *JobRequest) Validate() error {
	switch {
	case j.ID != "" && !IsPlainName(j.ID):
		return invalid("job id %q: must be a plain name", clipName(j.ID))
	case j.Procs <= 0 || j.Procs > MaxProcs:
		return invalid("%s: procs %d, must lie in [1, %d]", j.label(), j.Procs, MaxProcs)
	case j.Walltime <= 0 || j.Walltime > MaxDuration:
		return invalid("%s: walltime %d, must lie in [1, %d]", j.label(), j.Walltime, MaxDuration)
	case !goodPrice(j.MaxPrice):
		return invalid("%s: max_price %v, must be a number in [0, %v]", j.label(), j.MaxPrice, MaxPrice)
	case badFloat(j.MinSpeed) || j.MinSpeed < 0 || j.MinSpeed > MaxSpeed:
		return invalid("%s: min_speed %v, must be a number in [0, %v]", j.label(), j.MinSpeed, MaxSpeed)
	case j.MemMB < 0 || j.MemMB > MaxMemMB:
		return invalid("%s: mem_mb %d, must lie in [0, %d]", j.label(), j.MemMB, MaxMemMB)
	case !inInstants(j.Submitted):
		return invalid("%s: submitted %d, must lie in [0, %d]", j.label(), j.Submitted, MaxInstant)
	case !inInstants(j.Deadline):
		return invalid("%s: deadline %d, must lie in [0, %d] (0: none)", j.label(), j.Deadline, MaxInstant)
	case j.MaxSites < 0:
		return invalid("%s: max_sites %d, must be >= 0", j.label(), j.MaxSites)
	case j.Criterion != "" && !IsCriterion(j.Criterion):
		return invalid("%s: criterion %q, must be one of %q", j.label(), j.Criterion, Criteria())
	case j.User != "" && !IsPlainName(j.User):
		return invalid("%s: user %q: must be a plain name", j.label(), clipName(j.User))
	case j.Account != "" && !IsPlainName(j.Account):
		return invalid("%s: account %q: must be a plain name", j.label(), clipName(j.Account))
	}
	return plainFeatures(j.Features, "%s: features", j.label())
}

// plainFeatures refuses a node or job feature that is not a plain name
// (a grid job names the features it needs with plain names; a node
// feature with a space could never match one). where names the list.
func plainFeatures(features []string, where string, args ...any) error {
	for k, f := range features {
		if !IsPlainName(f) {
			return invalid("%s[%d]: %q: must be a plain name", fmt.Sprintf(where, args...), k, clipName(f))
		}
	}
	return nil
}

// CriterionOrDefault returns the job's criterion, DefaultCriterion
// (free-first) when unset.
func (j *JobRequest) CriterionOrDefault() string {
	if j.Criterion == "" {
		return DefaultCriterion
	}
	return j.Criterion
}

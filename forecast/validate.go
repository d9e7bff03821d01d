package forecast

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every validation error, so callers can tell bad
// input from failed machinery with errors.Is.
var ErrInvalid = errors.New("invalid input")

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
		return invalid("forecast site %q: must be a plain name", f.Site)
	}
	if f.Horizon < f.Generated {
		return invalid("forecast horizon %d is before generated %d", f.Horizon, f.Generated)
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

func (f *Forecast) nodeIndex() (map[string]Node, error) {
	nodes := make(map[string]Node, len(f.Nodes))
	for i, n := range f.Nodes {
		switch {
		case n.Name == "":
			return nil, invalid("nodes[%d].name: empty", i)
		case n.Procs <= 0:
			return nil, invalid("nodes[%d].procs: %d, must be > 0", i, n.Procs)
		case badFloat(n.Speed) || n.Speed <= 0:
			return nil, invalid("nodes[%d].speed: %v, must be > 0", i, n.Speed)
		case n.MemMB < 0:
			return nil, invalid("nodes[%d].mem_mb: %d, must be >= 0", i, n.MemMB)
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
		return invalid("slots[%d].node: unknown node %q", i, s.Node)
	case s.Procs <= 0:
		return invalid("slots[%d].procs: %d, must be > 0", i, s.Procs)
	case s.Procs > n.Procs:
		return invalid("slots[%d].procs: %d exceeds node %q capacity %d", i, s.Procs, s.Node, n.Procs)
	case s.End <= s.Start:
		return invalid("slots[%d].end: %d, must be after start %d", i, s.End, s.Start)
	case badFloat(s.Price) || s.Price < 0:
		return invalid("slots[%d].price: %v, must be a number >= 0", i, s.Price)
	}
	return nil
}

// Validate checks a job request against the v1 contract.
func (j *JobRequest) Validate() error {
	switch {
	case j.ID != "" && !IsPlainName(j.ID):
		return invalid("job id %q: must be a plain name", j.ID)
	case j.Procs <= 0:
		return invalid("job %s: procs %d, must be > 0", j.ID, j.Procs)
	case j.Walltime <= 0:
		return invalid("job %s: walltime %d, must be > 0", j.ID, j.Walltime)
	case badFloat(j.MaxPrice) || j.MaxPrice < 0:
		return invalid("job %s: max_price %v, must be a number >= 0", j.ID, j.MaxPrice)
	case badFloat(j.MinSpeed) || j.MinSpeed < 0:
		return invalid("job %s: min_speed %v, must be a number >= 0", j.ID, j.MinSpeed)
	case j.MemMB < 0:
		return invalid("job %s: mem_mb %d, must be >= 0", j.ID, j.MemMB)
	case j.MaxSites < 0:
		return invalid("job %s: max_sites %d, must be >= 0", j.ID, j.MaxSites)
	case j.Criterion != "" && !IsCriterion(j.Criterion):
		return invalid("job %s: criterion %q, must be %q, %q or %q", j.ID, j.Criterion, LeastHeld, EarliestStart, EarliestFinish)
	case j.User != "" && !IsPlainName(j.User):
		return invalid("job %s: user %q: must be a plain name", j.ID, j.User)
	case j.Account != "" && !IsPlainName(j.Account):
		return invalid("job %s: account %q: must be a plain name", j.ID, j.Account)
	}
	return nil
}

// CriterionOrDefault returns the job's criterion, DefaultCriterion
// (least-held) when unset.
func (j *JobRequest) CriterionOrDefault() string {
	if j.Criterion == "" {
		return DefaultCriterion
	}
	return j.Criterion
}

package broker

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
	"lookahead/wire"
)

// Budgets are the credit limits of accounts and users (the paper's first
// agreement). A job counts against its account's limit and its user's limit.
// Default, when set, is the limit of every user and account not listed (0:
// they cannot spend anything); when nil, holders not listed are unlimited.
// Zero Budgets limit nothing.
type Budgets struct {
	Accounts map[string]float64 `mapstructure:"accounts" json:"accounts,omitempty"`
	Users    map[string]float64 `mapstructure:"users" json:"users,omitempty"`
	Default  *float64           `mapstructure:"default_budget" json:"default_budget,omitempty"`
}

// Validate refuses negative limits.
func (b Budgets) Validate() error {
	for name, m := range map[string]map[string]float64{"accounts": b.Accounts, "users": b.Users} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !forecast.IsPlainName(k) { // no job's could ever be charged to it
				return fmt.Errorf("budgets.%s: %q: not a plain name (a grid %s as jobs name it)", name, forecast.Clip(k, 64), strings.TrimSuffix(name, "s"))
			}
			if v := m[k]; v < 0 || badFloat(v) {
				return fmt.Errorf("budgets.%s.%s: %v, must be >= 0", name, k, v)
			}
		}
	}
	if b.Default != nil && (*b.Default < 0 || badFloat(*b.Default)) {
		return fmt.Errorf("budgets.default_budget: %v, must be >= 0", *b.Default)
	}
	return nil
}

// account is a budget holder: "account:NAME" or "user:NAME".
type holder struct{ kind, name string }

func (h holder) String() string { return h.kind + " " + h.name }

// limits returns the holders a job is charged to, with their limits; a
// holder without a limit is not listed.
func (b Budgets) limits(r forecast.JobRequest) []limit {
	var out []limit
	if r.Account != "" {
		if v, ok := b.Accounts[r.Account]; ok {
			out = append(out, limit{holder{"account", r.Account}, v})
		} else if b.Default != nil {
			out = append(out, limit{holder{"account", r.Account}, *b.Default})
		}
	}
	if r.User != "" {
		if v, ok := b.Users[r.User]; ok {
			out = append(out, limit{holder{"user", r.User}, v})
		} else if b.Default != nil {
			out = append(out, limit{holder{"user", r.User}, *b.Default})
		}
	}
	return out
}

type limit struct {
	h     holder
	limit float64
}

// spend is what a job counts against its holders now: its worst case while
// it waits or commits, its real cost once reserved (and after: the final
// charge of a job that ended; nothing for one cancelled before it ran,
// whose cost was refunded).
func spend(j *Job) float64 {
	switch j.State {
	case wire.JobWaiting, wire.JobCommitting:
		return j.WorstCost
	}
	return j.Cost
}

// used is what holder h has spent or holds: what its forgotten jobs
// spent and the sum of spend over its jobs, kept as events apply
// (ledger.go).
func (s *State) used(h holder) float64 { return s.ledger.used(h) }

// Used reports what an account (or, with user true, a user) has spent or
// holds, in credits.
func (s *State) Used(name string, user bool) float64 {
	if user {
		return s.used(holder{"user", name})
	}
	return s.used(holder{"account", name})
}

// CheckBudget decides whether job r (not yet in the state) fits in what its
// holders have left: an empty string when it fits, else a message naming the
// holder, the limit, what is used and the job's worst case.
func (s *State) CheckBudget(b Budgets, r forecast.JobRequest) string {
	return s.checkDelta(b, r, WorstCost(r))
}

// CheckCommit decides whether a waiting job may be reserved at cost: its
// held worst case is replaced by the real cost.
func (s *State) CheckCommit(b Budgets, j *Job, cost float64) string {
	return s.checkDelta(b, j.Req, cost-spend(j))
}

func (s *State) checkDelta(b Budgets, r forecast.JobRequest, delta float64) string {
	for _, l := range b.limits(r) {
		used := s.used(l.h)
		if used+delta > l.limit+1e-9 {
			return fmt.Sprintf("%s: budget %.2f credits, %.2f used or held, job needs %.2f (max_price %.4g × %d procs × %s)",
				l.h, l.limit, used, delta, r.MaxPrice, r.Procs, durfmt.Seconds(r.Walltime))
		}
	}
	return ""
}

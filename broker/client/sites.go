package client

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"lookahead/wire"
)

// The states of a site, as `lookahead sites` and the web view show them,
// from the worst: out of planning because it does not answer requests,
// because its latest forecast was refused, because its agent stopped, or
// because it has been silent longer than the TTL; else fresh.
const (
	SiteSilent   = "silent"
	SiteExcluded = "excluded"
	SiteOffline  = "offline"
	SiteStale    = "stale"
	SiteFresh    = "fresh"
)

// SiteStates lists the states from the worst.
var SiteStates = []string{SiteSilent, SiteExcluded, SiteOffline, SiteStale, SiteFresh}

// RunsParts is what a site's agent says of running grid jobs' parts (its
// dispatch is on): "yes", "no", or "?" when it does not say (an agent
// older than the field, planned as yes).
func RunsParts(s wire.SiteStatus) string {
	switch {
	case s.RunsParts == nil:
		return "?"
	case *s.RunsParts:
		return "yes"
	}
	return "no"
}

// SiteState is the one rule for a site's state: not answering requests
// first (it holds the site out whatever it publishes), then a refused
// forecast, a stopped agent, silence.
func SiteState(s wire.SiteStatus) string {
	switch {
	case s.Unanswered != "":
		return SiteSilent
	case s.Excluded:
		return SiteExcluded
	case s.Offline:
		return SiteOffline
	case s.Stale:
		return SiteStale
	}
	return SiteFresh
}

// SiteSorts are the orders a site list can take: by name; by state (the
// worst first); by how long since the site was last heard (longest
// first); by free processor-hours, nodes or processors (most first); by
// clock offset (farthest from the broker's first). Ties go by name.
var SiteSorts = []string{"name", "state", "heard", "free", "nodes", "procs", "clock"}

// SiteQuery picks and orders sites: Sort is one of SiteSorts ("" is
// name); States keeps the sites in one of them (none: all); Match keeps
// the sites whose name contains it (case ignored).
type SiteQuery struct {
	Sort   string
	States []string
	Match  string
}

// Check names what is wrong with q (flag is how the caller names the
// setting: "--sort", "sort").
func (q SiteQuery) Check(sortName, stateName string) error {
	if q.Sort != "" && !slices.Contains(SiteSorts, q.Sort) {
		return fmt.Errorf("%s %q: want one of %s", sortName, q.Sort, strings.Join(SiteSorts, ", "))
	}
	for _, s := range q.States {
		if !slices.Contains(SiteStates, s) {
			return fmt.Errorf("%s %q: want states among %s", stateName, s, strings.Join(SiteStates, ", "))
		}
	}
	return nil
}

// SelectSites is the sites q keeps, in q's order (a new slice; sites is
// not changed).
func SelectSites(sites []wire.SiteStatus, q SiteQuery) []wire.SiteStatus {
	match := strings.ToLower(q.Match)
	out := make([]wire.SiteStatus, 0, len(sites))
	for _, s := range sites {
		if (len(q.States) == 0 || slices.Contains(q.States, SiteState(s))) && strings.Contains(strings.ToLower(s.Site), match) {
			out = append(out, s)
		}
	}
	key := siteKey(q.Sort)
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := key(out[i]), key(out[j]); a != b {
			return a < b
		}
		return out[i].Site < out[j].Site
	})
	return out
}

// siteKey is what a sort orders by, smallest first.
func siteKey(by string) func(wire.SiteStatus) float64 {
	switch by {
	case "state":
		return func(s wire.SiteStatus) float64 { return float64(slices.Index(SiteStates, SiteState(s))) }
	case "heard":
		return func(s wire.SiteStatus) float64 {
			if s.LastSeen == 0 {
				return -1e18 // never heard: first
			}
			return -float64(s.Age)
		}
	case "free":
		return func(s wire.SiteStatus) float64 { return -s.FreeProcHours }
	case "nodes":
		return func(s wire.SiteStatus) float64 { return -float64(s.Nodes) }
	case "procs":
		return func(s wire.SiteStatus) float64 { return -float64(s.Procs) }
	case "clock":
		return func(s wire.SiteStatus) float64 { return -float64(max(s.ClockOffset, -s.ClockOffset)) }
	}
	return func(wire.SiteStatus) float64 { return 0 } // name: the tie-break
}

// CountSites counts sites by state.
func CountSites(sites []wire.SiteStatus) map[string]int {
	out := make(map[string]int, len(SiteStates))
	for _, s := range sites {
		out[SiteState(s)]++
	}
	return out
}

package replay

import (
	"fmt"
	"sort"

	"lookahead/forecast"
)

// Checks collects violations of the replay's conservation laws. A correct
// run has none; tests assert that.
type Checks struct {
	Count      int      `json:"count"`
	Violations []string `json:"violations,omitempty"` // the first few
}

const keepViolations = 20

func (c *Checks) fail(format string, args ...any) {
	c.Count++
	if len(c.Violations) < keepViolations {
		c.Violations = append(c.Violations, fmt.Sprintf(format, args...))
	}
}

// ledger checks that the site's simulator holds exactly the reservations
// the broker made there and has not yet released (law 2: reservations are
// honoured, nothing else is reserved).
func (c *Checks) ledger(s *site, snap forecast.Snapshot) {
	seen := map[string]bool{}
	for _, r := range snap.Reservations {
		want, ok := s.ledger[r.ID]
		if !ok {
			c.fail("site %s holds reservation %s the broker does not know", s.spec.Name, r.ID)
			continue
		}
		seen[r.ID] = true
		if r.Start != want.Start || r.End != want.End || !sameHosts(r.Hosts, want.Hosts) {
			c.fail("site %s: reservation %s drifted: [%d,%d) %v, broker has [%d,%d) %v", s.spec.Name, r.ID, r.Start, r.End, r.Hosts, want.Start, want.End, want.Hosts)
		}
	}
	for id, r := range s.ledger {
		if !seen[id] && r.End > snap.Taken {
			c.fail("site %s lost reservation %s [%d,%d) at %d", s.spec.Name, id, r.Start, r.End, snap.Taken)
		}
	}
}

func sameHosts(a, b []forecast.HostProcs) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// capacity checks law 1 after a run: on no node of any site do the jobs
// (local jobs over their run, grid parts over the time they held the node)
// ever hold more processors than the node has. Also law 3: every part of a
// grid job starts at the job's start.
func (c *Checks) capacity(recs []JobRecord, sites []SiteSpec) {
	type ev struct {
		t     int64
		procs int
	}
	perNode := map[[2]string][]ev{}
	for _, r := range recs {
		for _, p := range r.Parts {
			if p.Start != r.Start {
				c.fail("job %s: part on %s starts at %d, the job at %d", r.ID, sites[p.Site].Name, p.Start, r.Start)
			}
			for _, h := range p.Hosts {
				k := [2]string{sites[p.Site].Name, h.Node}
				perNode[k] = append(perNode[k], ev{r.Start, h.Procs}, ev{r.End, -h.Procs})
			}
		}
	}
	limit := map[string]int{}
	for _, s := range sites {
		limit[s.Name] = s.PPN
	}
	for k, evs := range perNode {
		sort.Slice(evs, func(a, b int) bool {
			if evs[a].t != evs[b].t {
				return evs[a].t < evs[b].t
			}
			return evs[a].procs < evs[b].procs // ends before starts at one instant
		})
		held := 0
		for _, e := range evs {
			held += e.procs
			if held > limit[k[0]] {
				c.fail("node %s/%s holds %d processors at %d, it has %d", k[0], k[1], held, e.t, limit[k[0]])
				break
			}
		}
	}
}

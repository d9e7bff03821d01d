package broker

import (
	"fmt"
	"sort"
	"strings"

	"lookahead/forecast"
)

// Capacity is the processors of every site the broker currently knows: the
// nodes of the latest forecast it took from each (fresh, stale or out of
// planning alike: a site that is away now may return). It bounds what a
// submission may ask for; the model's static limits are elsewhere
// (forecast/limits.go, docs/formats.md "Limits of the model").
type Capacity map[string]int

// CapacityOf sums the processors of each site's forecast nodes.
func CapacityOf(sites []Site) Capacity {
	c := Capacity{}
	for _, s := range sites {
		if s.Forecast.Site == "" {
			continue // no forecast was ever taken from it
		}
		n := 0
		for _, node := range s.Forecast.Nodes {
			n += node.Procs
		}
		c[s.Name] = n
	}
	return c
}

// sized is one site and its processors.
type sized struct {
	site  string
	procs int
}

// largest lists the sites largest first (then by name).
func (c Capacity) largest() []sized {
	out := make([]sized, 0, len(c))
	for s, n := range c {
		out = append(out, sized{s, n})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].procs != out[b].procs {
			return out[a].procs > out[b].procs
		}
		return out[a].site < out[b].site
	})
	return out
}

// Refuse says why job could never be held by the sites known (the empty
// string when it could, or when no site is known yet): more processors
// than the largest site has for a one-site job, than the max_sites
// largest sites have together, or than the whole grid has.
func (c Capacity) Refuse(job forecast.JobRequest) string {
	sites := c.largest()
	if len(sites) == 0 {
		return ""
	}
	k := job.MaxSites
	if k <= 0 || k > len(sites) {
		k = len(sites)
	}
	total, names := 0, make([]string, 0, k)
	for _, s := range sites[:k] {
		total += s.procs
		names = append(names, s.site)
	}
	if int64(job.Procs) <= int64(total) {
		return ""
	}
	switch {
	case k == 1 && job.MaxSites == 1:
		return fmt.Sprintf("%d processors asked: the largest site known (%s) has %d, and the job may use one site (max_sites 1)",
			job.Procs, names[0], total)
	case k == len(sites):
		return fmt.Sprintf("%d processors asked: the whole grid known (%d sites: %s) has %d", job.Procs, k, strings.Join(names, ", "), total)
	}
	return fmt.Sprintf("%d processors asked: the %d largest sites known (%s) have %d together, and the job may use %d sites (max_sites)",
		job.Procs, k, strings.Join(names, ", "), total, k)
}

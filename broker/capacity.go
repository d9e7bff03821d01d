package broker

import (
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
)

// Capacity is what every site the broker currently knows could hold, from
// the latest forecast it took from each (fresh, stale or out of planning
// alike: a site that is away now may return): its processors, and how
// long a job its forecasts can hold. It bounds what a submission may ask
// for; the model's static limits are elsewhere (forecast/limits.go,
// docs/formats.md "Limits of the model").
type Capacity map[string]SiteSize

// SiteSize is one site's part of Capacity.
type SiteSize struct {
	Procs int
	// Span is the length of its forecast's window (horizon − generated)
	// and Fastest its fastest node's speed: no forecast of the site holds
	// a job whose walltime ÷ Fastest exceeds Span. Speeds are its
	// processors by node speed.
	Span    int64
	Fastest float64
	Speeds  map[float64]int
	// NoParts: its agent says it does not run grid jobs' parts (a job
	// with a script cannot use it; forecast.TakesParts).
	NoParts bool
}

// sizeOf sums the processors of a site's forecast nodes.
func sizeOf(f *forecast.Forecast) SiteSize {
	z := SiteSize{Span: f.Horizon - f.Generated, Speeds: map[float64]int{}, NoParts: !f.TakesParts()}
	for _, node := range f.Nodes {
		z.Procs += node.Procs
		z.Fastest = max(z.Fastest, node.Speed)
		z.Speeds[node.Speed] += node.Procs
	}
	return z
}

// CapacityCache is the sites' Capacity kept from one submission to the
// next: a site's size is summed again only when its forecast is another
// one (otherwise every submission walks every node of every site: 100
// sites of 500 nodes, BenchmarkCapacityAt100Sites). Not safe for
// concurrent use.
type CapacityCache map[string]cachedSize

type cachedSize struct {
	key  forecastKey
	size SiteSize
}

// forecastKey tells one taken forecast from another: a new revision or
// generation, or another node list.
type forecastKey struct {
	seq                uint64
	generated, horizon int64
	nodes              *forecast.Node
	n                  int
}

func keyOf(f *forecast.Forecast) forecastKey {
	k := forecastKey{seq: f.Seq, generated: f.Generated, horizon: f.Horizon, n: len(f.Nodes)}
	if len(f.Nodes) > 0 {
		k.nodes = &f.Nodes[0]
	}
	return k
}

// Of is the Capacity of sites (those a forecast was ever taken from),
// the sizes of sites whose forecast did not change since the last call
// taken from the cache; sites gone are dropped from it.
func (c CapacityCache) Of(sites iter.Seq[*Site]) Capacity {
	out := Capacity{}
	for s := range sites {
		if s.Forecast.Site == "" {
			continue // no forecast was ever taken from it
		}
		k := keyOf(&s.Forecast)
		z, ok := c[s.Name]
		if !ok || z.key != k {
			z = cachedSize{k, sizeOf(&s.Forecast)}
			c[s.Name] = z
		}
		out[s.Name] = z.size
	}
	for name := range c {
		if _, ok := out[name]; !ok {
			delete(c, name)
		}
	}
	return out
}

// TooLong says why no known site's forecast could ever hold the job (the
// empty string when one could, or when no site is known yet): its walltime
// on the fastest nodes alone (naming the longest walltime one could hold
// and where), or its processors for its walltime on any set of at most
// max_sites sites whose forecasts reach that far (forecast.EverFits; the
// broker's multi-site factor is not counted, so it refuses only what
// never fits).
func (c Capacity) TooLong(job forecast.JobRequest) string {
	if msg := c.tooLongAlone(job); msg != "" {
		return msg
	}
	var reach []forecast.SiteReach
	var spans []string
	for _, name := range slices.Sorted(maps.Keys(c)) {
		z := c[name]
		if z.Span <= 0 || z.Fastest <= 0 {
			continue // a forecast with no window or no speeds says nothing of it
		}
		reach = append(reach, forecast.SiteReach{Name: name, Span: z.Span, Procs: z.Speeds})
		spans = append(spans, fmt.Sprintf("%s %d processors, %s", name, z.Procs, durfmt.Seconds(z.Span)))
	}
	if len(reach) == 0 || forecast.EverFits(reach, job.Procs, job.Walltime, job.MaxSites, holdAlone) {
		return ""
	}
	return fmt.Sprintf("%d processors for %s: no set of the sites known can hold that within the horizon of their forecasts (%s); no forecast could ever place it",
		job.Procs, durfmt.Seconds(job.Walltime), strings.Join(spans, "; "))
}

// holdAlone is how long walltime holds processors of speed slowest, no
// multi-site factor or staging counted (the planner's are not the
// broker's to know here: refuse only what never fits).
func holdAlone(walltime int64, slowest float64, _ int) int64 {
	return int64(math.Ceil(float64(walltime) / slowest))
}

// tooLongAlone: no site's fastest nodes could hold the walltime.
func (c Capacity) tooLongAlone(job forecast.JobRequest) string {
	best, where := int64(-1), ""
	for _, name := range slices.Sorted(maps.Keys(c)) {
		z := c[name]
		if z.Fastest <= 0 {
			continue
		}
		if float64(job.Walltime) <= float64(z.Span)*z.Fastest {
			return ""
		}
		if w := int64(float64(z.Span) * z.Fastest); w > best {
			best, where = w, fmt.Sprintf("%s (forecast horizon %s, fastest node speed %g)", name, durfmt.Seconds(z.Span), z.Fastest)
		}
	}
	if best < 0 {
		return ""
	}
	return fmt.Sprintf("walltime %s is longer than every site's forecast horizon can hold: at most %s, on %s; no forecast could ever place it",
		durfmt.Seconds(job.Walltime), durfmt.Seconds(best), where)
}

// sized is one site and its processors.
type sized struct {
	site  string
	procs int
}

// largest lists the sites largest first (then by name).
func (c Capacity) largest() []sized {
	out := make([]sized, 0, len(c))
	for s, z := range c {
		out = append(out, sized{s, z.Procs})
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

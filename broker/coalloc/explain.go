package coalloc

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
)

// Explain says, for people, why a job gets no allocation on these
// forecasts and what would help: the requirement no node meets; a
// walltime longer than the forecasts reach; how many of its processors
// are free together for its walltime at its max_price (and the walltime
// its processors could have); the max_price or max_sites that would let it
// fit. When the job fits on the forecasts alone, it says so: the jobs
// planned before it took that time. It searches the forecasts a few dozen
// times (binary searches over processors, walltime and price), so it is
// for one job on demand, not for every job of a cycle.
func Explain(forecasts []forecast.Forecast, job forecast.JobRequest, opts Options) string {
	p, err := NewPool(forecasts, opts)
	if err != nil {
		return "the forecasts cannot be planned on: " + err.Error()
	}
	if err := job.Validate(); err != nil {
		return "invalid request: " + err.Error()
	}
	probe := job
	probe.Criterion = forecast.EarliestStart
	a := p.Try(probe)
	switch {
	case a.Placed():
		return fmt.Sprintf("on the forecasts alone it would start in %s on %s: the jobs planned before it in the queue take that time",
			durfmt.Seconds(a.Start-opts.NotBefore), strings.Join(a.Sites(), ", "))
	case a.Error == NoFitRequirements:
		return p.explainRequirements(job)
	}
	var why []string
	if reach, where := p.longestHold(job); float64(job.Walltime) > reach {
		why = append(why, fmt.Sprintf("its walltime %s is longer than the forecasts reach: at most %s fits, on %s",
			durfmt.Seconds(job.Walltime), durfmt.Seconds(int64(reach)), where))
	} else {
		why = append(why, p.explainShort(job, probe)...)
	}
	if help := p.whatHelps(probe); help != "" {
		why = append(why, help)
	}
	return strings.Join(why, "; ")
}

// explainRequirements names the requirement no node meets.
func (p *Pool) explainRequirements(job forecast.JobRequest) string {
	fastest, most := 0.0, int64(0)
	features := map[string]bool{}
	for _, c := range p.classes {
		fastest, most = max(fastest, c.speed), max(most, c.memMB)
		for _, f := range c.features {
			features[f] = true
		}
	}
	var why []string
	if job.MinSpeed > fastest {
		why = append(why, fmt.Sprintf("min_speed %g: the fastest node has %g", job.MinSpeed, fastest))
	}
	if job.MemMB > most {
		why = append(why, fmt.Sprintf("mem_mb %d: the largest node has %d", job.MemMB, most))
	}
	for _, f := range job.Features {
		if !features[f] {
			why = append(why, fmt.Sprintf("feature %q: no node has it", f))
		}
	}
	if len(why) == 0 {
		why = append(why, "no single node meets min_speed, mem_mb and the features together")
	}
	return "no node meets the job's requirements: " + strings.Join(why, "; ")
}

// longestHold is the longest walltime (reference seconds) any site's
// forecast can hold on its fastest node the job may use, and where.
func (p *Pool) longestHold(job forecast.JobRequest) (float64, string) {
	best, where := -1.0, ""
	for _, s := range p.sites {
		fastest := 0.0
		for _, n := range s.nodes {
			c := p.classes[p.nodeClass[n]]
			if c.speed >= job.MinSpeed && c.memMB >= job.MemMB && hasAll(c.features, job.Features) {
				fastest = max(fastest, c.speed)
			}
		}
		span := s.fc.Horizon - max(s.fc.Generated, p.opts.NotBefore)
		if fastest == 0 || span <= 0 {
			continue
		}
		if h := float64(span) * fastest; h > best {
			best = h
			where = fmt.Sprintf("%s (its forecast reaches %s ahead; fastest node speed %g)", s.fc.Site, durfmt.Seconds(span), fastest)
		}
	}
	return max(best, 0), where
}

// explainShort says how much of the job's processors and walltime fit at
// its max_price.
func (p *Pool) explainShort(job, probe forecast.JobRequest) []string {
	fits := func(procs int, walltime int64) bool {
		q := probe
		q.Procs, q.Walltime = procs, walltime
		return p.Try(q).Placed()
	}
	sites := "any number of sites"
	if job.MaxSites > 0 {
		sites = fmt.Sprintf("at most %d site(s)", job.MaxSites)
	}
	most := sort.Search(job.Procs, func(q int) bool { return !fits(q+1, job.Walltime) }) // fits with q, not q+1
	why := []string{fmt.Sprintf("at max_price %g at most %d of its %d processors are free together for its walltime of %s on %s, at any start before the forecasts end",
		job.MaxPrice, most, job.Procs, durfmt.Seconds(job.Walltime), sites)}
	if w := sort.Search(int(min(job.Walltime, math.MaxInt32)), func(w int) bool { return !fits(job.Procs, int64(w)+1) }); w > 0 {
		why = append(why, fmt.Sprintf("its %d processors are free together for at most %s", job.Procs, durfmt.Seconds(int64(w))))
	}
	return why
}

// whatHelps names a max_price, or a max_sites, at which the job would fit
// on these forecasts ("" when neither would).
func (p *Pool) whatHelps(probe forecast.JobRequest) string {
	var help []string
	i := sort.SearchFloat64s(p.prices, probe.MaxPrice)
	dearer := slices.Clone(p.prices[i:])
	if len(dearer) > 0 && dearer[0] == probe.MaxPrice {
		dearer = dearer[1:]
	}
	k := sort.Search(len(dearer), func(k int) bool {
		q := probe
		q.MaxPrice = dearer[k]
		return p.Try(q).Placed()
	})
	if k < len(dearer) {
		help = append(help, fmt.Sprintf("max_price %g would fit (dearer slots are local jobs' forecast time, or owners who charge more)", dearer[k]))
	}
	if probe.MaxSites > 0 && probe.MaxSites < len(p.sites) {
		q := probe
		q.MaxSites = 0
		if p.Try(q).Placed() {
			help = append(help, "more sites (max_sites) would fit")
		}
	}
	if len(help) == 0 {
		return ""
	}
	return "what would help: " + strings.Join(help, "; ")
}

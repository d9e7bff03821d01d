package daemon

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"lookahead/broker"
	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/internal/durfmt"
)

// explainLater says why a job planned to start at a.Start, later than
// opts.NotBefore (the cycle's now plus the start margin), cannot start
// then: how many of its processors are free together at that instant for
// its walltime at its max_price, by site; what would let it start then (a
// dearer max_price, more sites, a shorter walltime, nodes its requirements
// leave out); which of the plan's sites have more of them free together
// at its start (freedBy); and when and where it is planned. It searches the forecasts
// with the planner's own placement (coalloc.Pool.Try, as coalloc.Explain
// does for a job that does not fit), so it is for one job on demand. ""
// when the allocation is not placed or starts at NotBefore.
func explainLater(fcs []forecast.Forecast, job forecast.JobRequest, a forecast.Allocation, opts coalloc.Options) string {
	now := opts.NotBefore
	if !a.Placed() || a.Start <= now || job.Procs <= 0 {
		return ""
	}
	p, err := coalloc.NewPool(fcs, opts)
	if err != nil {
		return ""
	}
	probe := job
	probe.Criterion = forecast.EarliestStart
	startsNow := func(p *coalloc.Pool, q forecast.JobRequest) bool {
		b := p.Try(q)
		return b.Placed() && b.Start <= now
	}
	most := mostNow(p, probe, startsNow)
	var why []string
	if most >= job.Procs {
		why = append(why, fmt.Sprintf("its %d processors are free together now on the forecasts at max_price %g: the jobs planned before it in the queue, or its criterion, put it later",
			job.Procs, job.MaxPrice))
	} else {
		free := freeBySite(fcs, probe, opts)
		why = append(why, fmt.Sprintf("cannot start now: at max_price %g only %d of its %d processors are free together now for its walltime of %s%s (%s)",
			job.MaxPrice, most, job.Procs, durfmt.Seconds(job.Walltime), onSites(job.MaxSites), siteCounts(fcs, free)))
		why = append(why, helpsNow(p, fcs, probe, startsNow)...)
		if grown := freedBy(fcs, probe, a, opts, free); grown != "" {
			why = append(why, fmt.Sprintf("by %s its processors free together at max_price %g grow on %s (local jobs or reservations end there on the forecasts)",
				clockUTC(a.Start), job.MaxPrice, grown))
		}
	}
	why = append(why, fmt.Sprintf("planned at %s (in %s) on %s",
		clockUTC(a.Start), durfmt.Seconds(a.Start-now), planSites(a)))
	return strings.Join(why, "; ")
}

// clockUTC is instant t as the why-texts write it ("15:04 UTC").
func clockUTC(t int64) string { return time.Unix(t, 0).UTC().Format("15:04 UTC") }

// reservedWhen says when allocation a, planned later than now (the
// cycle's), is reserved: in the first cycle from its start less the
// commit lead (broker.Due, the rule the cycle commits by), and that until
// then the plan may move; or, when a is due already, that it is being
// reserved (each cycle tries again until its reservations hold).
func reservedWhen(a forecast.Allocation, now int64, lead time.Duration) string {
	l := int64(lead / time.Second)
	if broker.Due(a, now, l) {
		return fmt.Sprintf("its start is within the commit lead (%s): it is due to be reserved, and each cycle tries until its reservations hold",
			durfmt.Seconds(l))
	}
	return fmt.Sprintf("it is reserved at %s, the commit lead (%s) before its start; until then the plan may move",
		clockUTC(a.Start-l), durfmt.Seconds(l))
}

// mostNow is how many of probe's processors start together now (0..Procs).
func mostNow(p *coalloc.Pool, probe forecast.JobRequest, startsNow func(*coalloc.Pool, forecast.JobRequest) bool) int {
	return sort.Search(probe.Procs, func(q int) bool { // fits with q, not q+1
		r := probe
		r.Procs = q + 1
		return !startsNow(p, r)
	})
}

func onSites(maxSites int) string {
	if maxSites > 0 {
		return fmt.Sprintf(" on at most %d site(s)", maxSites)
	}
	return ""
}

// freeBySite is how many of probe's processors each site alone has free
// together at opts.NotBefore for its walltime (0..Procs), in forecast
// order.
func freeBySite(fcs []forecast.Forecast, probe forecast.JobRequest, opts coalloc.Options) []int {
	at := opts.NotBefore
	startsAt := func(p *coalloc.Pool, q forecast.JobRequest) bool {
		b := p.Try(q)
		return b.Placed() && b.Start <= at
	}
	out := make([]int, len(fcs))
	for i, f := range fcs {
		if p, err := coalloc.NewPool([]forecast.Forecast{f}, opts); err == nil {
			out[i] = mostNow(p, probe, startsAt)
		}
	}
	return out
}

// siteCounts writes freeBySite's counts ("delta 9, beta 8").
func siteCounts(fcs []forecast.Forecast, n []int) string {
	out := make([]string, len(fcs))
	for i, f := range fcs {
		out[i] = fmt.Sprintf("%s %d", f.Site, n[i])
	}
	return strings.Join(out, ", ")
}

// freedBy names the sites of allocation a where more of probe's
// processors are free together at a.Start than at opts.NotBefore (now:
// freeBySite's counts there): "delta from 9 to 11, gamma from 0 to 4", ""
// when none. Slots are anonymous: a site's count grows because what held
// its processors at the job's price (a running or queued local job, a
// reservation, a reserved grid job) ends on the forecast, which does not
// say which.
func freedBy(fcs []forecast.Forecast, probe forecast.JobRequest, a forecast.Allocation, opts coalloc.Options, now []int) string {
	atStart := opts
	atStart.NotBefore = a.Start
	sites := a.Sites()
	var out []string
	for i, f := range fcs {
		if !slices.Contains(sites, f.Site) {
			continue
		}
		if n := freeBySite(fcs[i:i+1], probe, atStart)[0]; n > now[i] {
			out = append(out, fmt.Sprintf("%s from %d to %d", f.Site, now[i], n))
		}
	}
	return strings.Join(out, ", ")
}

// helpsNow names what would let the job start now: a max_price (the
// lowest slot price that would), more sites, a shorter walltime, or the
// processors its requirements leave out.
func helpsNow(p *coalloc.Pool, fcs []forecast.Forecast, probe forecast.JobRequest, startsNow func(*coalloc.Pool, forecast.JobRequest) bool) []string {
	var help []string
	if prices := slotPrices(fcs, probe.MaxPrice); len(prices) > 0 {
		anyPrice := probe
		anyPrice.MaxPrice = prices[len(prices)-1]
		k := sort.Search(len(prices), func(k int) bool {
			q := probe
			q.MaxPrice = prices[k]
			return startsNow(p, q)
		})
		if k < len(prices) {
			help = append(help, fmt.Sprintf("max_price %g would let it start now", prices[k]))
		} else if n := mostNow(p, anyPrice, startsNow); n > mostNow(p, probe, startsNow) {
			help = append(help, fmt.Sprintf("at any price %d are free together now", n))
		}
	}
	if probe.MaxSites > 0 {
		q := probe
		q.MaxSites = 0
		if startsNow(p, q) {
			help = append(help, "more sites (max_sites) would let it start now")
		}
	}
	if w := sort.Search(int(min(probe.Walltime, math.MaxInt32)), func(w int) bool {
		q := probe
		q.Walltime = int64(w) + 1
		return !startsNow(p, q)
	}); w > 0 {
		help = append(help, fmt.Sprintf("its %d processors are free together now for %s", probe.Procs, durfmt.Seconds(int64(w))))
	}
	if probe.MemMB > 0 || probe.MinSpeed > 0 || len(probe.Features) > 0 {
		q := probe
		q.MemMB, q.MinSpeed, q.Features = 0, 0, nil
		if n, m := mostNow(p, q, startsNow), mostNow(p, probe, startsNow); n > m {
			help = append(help, fmt.Sprintf("%d more are free now on nodes short of its min_speed, mem_mb or features", n-m))
		}
	}
	return help
}

// slotPrices are the distinct prices of the forecasts' slots above
// floor, ascending.
func slotPrices(fcs []forecast.Forecast, floor float64) []float64 {
	var out []float64
	for _, f := range fcs {
		for _, s := range f.Slots {
			if s.Price > floor {
				out = append(out, s.Price)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// planSites is an allocation's processors by site ("delta 10, beta 8").
func planSites(a forecast.Allocation) string {
	procs := map[string]int{}
	for _, pt := range a.Parts {
		procs[pt.Site] += pt.Procs
	}
	var out []string
	for _, s := range a.Sites() {
		out = append(out, fmt.Sprintf("%s %d", s, procs[s]))
	}
	return strings.Join(out, ", ")
}

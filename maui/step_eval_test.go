package maui

import (
	"math"
	"sort"
)

// EvaluatePolicy is a measurement, not something the agent runs: it is the
// evidence for the step policy's cost model in docs/maui.md (how many
// exact stops a window costs on Maui's own exact schedule), so it lives
// with the tests that make those measurements.

// PolicyCost is what a step policy implies on a known event-exact schedule
// (computed, not measured on Maui).
type PolicyCost struct {
	ExactStops  int // iterations stopping exactly on an event inside the window
	SoloReads   int // exact stops that need a state read before the step (not pipelinable)
	CoarseStops int // fixed-step iterations after the window up to the horizon
	// MissedStarts counts starts inside the window not on an exact stop
	// (must be 0: then the window's schedule equals the exact one).
	MissedStarts int
	// GridLowerBound is the mean delay of post-window starts if only their
	// own start were rounded up to the coarse grid; real fixed-step
	// schedules drift far more (see sim3 cmp.txt), so it is a lower bound.
	GridLowerBound float64
}

// EvaluatePolicy replays the stops policy p makes on an event-exact
// schedule recs (Maui's own, e.g. simstat.exact500.out), counting from the
// first start and up to horizon seconds after it. Runtimes are
// Completion−Start, as Maui simulated them.
//
// procs is the machine's processor count; with it, only jobs that fit in
// the processors the running jobs leave free count as possibly started
// unseen (as the driver does); 0 counts every job not yet started.
func EvaluatePolicy(recs []WorkloadRecord, p StepPolicy, horizon int64, procs int) PolicyCost {
	p = p.WithDefaults()
	var c PolicyCost
	if len(recs) == 0 {
		return c
	}
	t0 := int64(math.MaxInt64)
	for _, r := range recs {
		t0 = min(t0, r.Start)
	}
	jobs := make([]evalJob, len(recs))
	var ends []int64
	for i, r := range recs {
		jobs[i] = evalJob{r.Start - t0, r.Completion - t0, r.Completion - r.Start, r.Tasks}
		ends = append(ends, r.Completion-t0)
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].start < jobs[b].start })
	sort.Slice(ends, func(a, b int) bool { return ends[a] < ends[b] })
	stops := map[int64]bool{0: true}
	t := int64(0)
	for {
		i := sort.Search(len(ends), func(k int) bool { return ends[k] > t })
		next, exact := p.Next(t, valueAt(ends, i), i < len(ends), horizon)
		if !exact {
			break
		}
		if !CanPipeline(t, next, minRunNotStartedBefore(jobs, t, procs)) {
			c.SoloReads++
		}
		c.ExactStops++
		stops[next] = true
		t = next
	}
	var delay float64
	var after int
	for _, j := range jobs {
		switch {
		case j.start < p.Near && j.start <= horizon:
			if !stops[j.start] {
				c.MissedStarts++
			}
		case j.start <= horizon:
			k := (j.start - t + p.Coarse - 1) / p.Coarse
			delay += float64(t + k*p.Coarse - j.start)
			after++
		}
	}
	if horizon > t {
		c.CoarseStops = int((horizon - t + p.Coarse - 1) / p.Coarse)
	}
	if after > 0 {
		c.GridLowerBound = delay / float64(after)
	}
	return c
}

type evalJob struct {
	start, end, run int64
	tasks           int
}

func valueAt(s []int64, i int) int64 {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// minRunNotStartedBefore is the shortest runtime of jobs that had not
// started before t and fit in what the jobs running across t leave free
// (those that may start at t, unseen).
func minRunNotStartedBefore(jobs []evalJob, t int64, procs int) int64 {
	free := procs
	for _, j := range jobs {
		if j.start < t && j.end > t {
			free -= j.tasks
		}
	}
	m := int64(math.MaxInt64)
	for _, j := range jobs {
		if j.start >= t && (procs == 0 || j.tasks <= free) {
			m = min(m, j.run)
		}
	}
	return m
}

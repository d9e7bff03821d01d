package coalloc

import (
	"math"
	"slices"

	"lookahead/forecast"
)

// Within one cycle the pool only loses processors, so a job that asks at
// least as much as one that did not fit earlier in the cycle (no less
// processors and walltime, no higher max_price, no weaker node
// requirements, no more sites) has no feasible allocation either: it gets
// its no-fit answer without a sweep. A no-fit job costs a sweep over the
// whole horizon, so on a busy grid this is most of a cycle's sweeps.

// The same argument bounds a job's start from below: with exact tiers
// (Options.Tiers empty) an earlier job's first search is unbounded over
// every node it may use at its shortest duration, so no allocation of it
// starts before what that search found (its lower); a job that asks at
// least as much has no feasible start before that either, and its sweeps
// begin there (Pool.floor) instead of at NotBefore.

// maxFloors bounds the list of (request, lower) the floors come from.
const maxFloors = 64

type floorOf struct {
	job   forecast.JobRequest
	lower int64
}

// floorFor is the latest lower bound on job's start that a listed job it
// asks at least as much as gives (math.MinInt64: none).
func (w *walk) floorFor(job forecast.JobRequest) int64 {
	f := int64(math.MinInt64)
	for _, k := range w.floors {
		if k.lower > f && asksLess(k.job, job) {
			f = k.lower
		}
	}
	return f
}

// addFloor lists a placed job's lower bound, unless a listed job that asks
// less has a later one; listed ones it makes useless are dropped, and the
// oldest goes when the list is full.
func (w *walk) addFloor(job forecast.JobRequest, lower int64) {
	if len(w.p.opts.Tiers) > 0 || lower == lowerNone {
		return
	}
	if slices.ContainsFunc(w.floors, func(k floorOf) bool { return k.lower >= lower && asksLess(k.job, job) }) {
		return
	}
	w.floors = slices.DeleteFunc(w.floors, func(k floorOf) bool { return k.lower <= lower && asksLess(job, k.job) })
	if len(w.floors) == maxFloors {
		w.floors = slices.Delete(w.floors, 0, 1)
	}
	w.floors = append(w.floors, floorOf{job: job, lower: lower})
}

// dominated reports the answer of a job that a listed no-fit job
// dominates: invalid and requirement answers are left to Place.
func (w *walk) dominated(job forecast.JobRequest) (string, bool) {
	if len(w.noFit) == 0 || !slices.ContainsFunc(w.noFit, func(k forecast.JobRequest) bool { return asksLess(k, job) }) {
		return "", false
	}
	if job.Validate() != nil || !slices.Contains(w.usable(job), true) {
		return "", false
	}
	return NoFitCapacity, true
}

// addNoFit lists a job that did not fit, unless a listed one asks less;
// listed ones that ask more are dropped.
func (w *walk) addNoFit(job forecast.JobRequest) {
	if slices.ContainsFunc(w.noFit, func(k forecast.JobRequest) bool { return asksLess(k, job) }) {
		return
	}
	w.noFit = slices.DeleteFunc(w.noFit, func(k forecast.JobRequest) bool { return asksLess(job, k) })
	w.noFit = append(w.noFit, job)
}

// asksLess reports whether every allocation feasible for b is feasible for
// a: a needs no more processors, time, speed, memory, features or sites
// and pays at least as much.
func asksLess(a, b forecast.JobRequest) bool {
	return a.Procs <= b.Procs && a.Walltime <= b.Walltime && a.MaxPrice >= b.MaxPrice &&
		a.MinSpeed <= b.MinSpeed && a.MemMB <= b.MemMB && sitesAtLeast(a.MaxSites, b.MaxSites) &&
		hasAll(b.Features, a.Features)
}

// sitesAtLeast: max_sites a allows at least what b does (0 is any).
func sitesAtLeast(a, b int) bool {
	return a == 0 || (b != 0 && a >= b)
}

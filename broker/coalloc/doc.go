// Package coalloc is lookahead's co-allocation core: it places parallel grid
// jobs onto the priced time slots that every site's agent forecasts, so that
// all processors of a job are free over the same interval, possibly across
// several sites.
//
// It is pure: values in, values out, no I/O, no clock reads (the earliest
// admissible start is Options.NotBefore), stdlib and lookahead/forecast only.
//
// A Pool indexes all sites' slots once per planning cycle (NewPool); Place
// plans one job (stage 1: earliest feasible start by a sweep over the slots
// sorted by time; stage 2: node choice and slot splitting) and removes what
// the job used, so the next job sees only what is left. PlanQueue plans a
// whole queue in the options' queue order (SortQueue; fcfs by default). Incremental plans the queue
// cycle after cycle with the answers PlanQueue would give from scratch,
// re-planning only the jobs whose answer may have changed (what it caches
// and what invalidates it: incremental.go). See docs/coalloc.md for the
// algorithm, its tie-breaks and its complexity.
//
// A job that does not fit is an answer, not an error: its Allocation carries
// a stable Error string (NoFitRequirements, NoFitCapacity, or "invalid: ...").
// Errors are returned only for bad forecasts or options.
package coalloc

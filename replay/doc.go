// Package replay is lookahead's grid replay: a discrete-event replay of
// several sites over time, each running its local workload through the
// built-in simulator (package forecast), with a stream of grid jobs placed by
// a pluggable broker strategy through forecasts, reservations and the
// co-allocation core (package broker/coalloc).
//
// It owns:
//
//   - Scenario, the description of a replay (sites, workloads, broker
//     parameters, strategies, sweeps) and its validation; the YAML form is
//     decoded by the CLI (struct tags only here);
//   - the strategies (lookahead, single-site-earliest, greedy-multisite,
//     cheap, mct, with optional width sort), pure functions over forecasts;
//   - the event loop that drives the sites' simulators, builds forecasts,
//     plans in cycles and commits reservations;
//   - the metrics (AWRT, AWWT, bounded slowdown, utilization, density,
//     local jobs' extra wait, credits) and the conservation checks.
//
// Everything here is pure: values in, values out; no clock reads, no files,
// no logging. Not safe for concurrent use unless a function says so.
package replay

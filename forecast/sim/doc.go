// Package sim is lookahead's built-in event-driven cluster simulator with
// Maui's scheduling policy (priority order, backfill with a reservation
// depth), the engine the agent's embedded forecaster, the grid replay and the
// demo's simulated sites drive, and the forecast builder that turns a
// cluster snapshot into priced slots.
//
// Semantics (see docs/simulator.md for the long form):
//
//   - A cluster is a set of nodes, each with a processor count. A job asks
//     for processors (optionally in a nodes×ppn shape) and a walltime; it
//     runs min(runtime, walltime): Torque kills a job at its walltime. Jobs
//     wider than the cluster are rejected (an Event of kind Rejected), never
//     dropped silently.
//   - Queue order: higher Priority first, then earlier Submit, then job id
//     (numeric ids compare as numbers).
//   - Events at one instant (completions, reservation ends, submissions) are
//     all applied before the scheduling pass at that instant.
//   - A pass walks the queue in order. A job that fits now (on the
//     processor profile, which holds running jobs until their walltime,
//     grid reservations and the reservations of earlier blocked jobs, and
//     on concrete nodes) starts now. The first Depth blocked jobs get a
//     reservation at their earliest fit — node-level, in Maui's node order,
//     when Depth is bounded — and later jobs may start only where they do
//     not touch them. As in Maui, the first blocked job past the depth ends
//     the pass; FIRSTFIT backfill follows, visiting windows shortest first,
//     each node's window measured the way Maui 3.3.1's availability ranges
//     measure it (this reproduces every start and host of the captured
//     Maui schedules). Depth 0 is FCFS (no backfill), 1 is EASY,
//     -1 (unbounded) is conservative backfilling, planned on the processor
//     profile.
//   - Policy.Poll > 0 makes the scheduler act only every Poll seconds
//     (Maui's RMPOLLINTERVAL in simulation).
//
// Everything here is pure: no clock reads, no I/O, stdlib only. An Engine is
// not safe for concurrent use.
package sim

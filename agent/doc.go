// Package agent is the site daemon: it turns pbs_server events into
// snapshots, snapshots into forecasts (Maui SIMULATION or the built-in
// simulator), publishes them over NATS, and serves reserve/release/list
// requests from the broker through the Maui adapter.
//
// The agent talks to its site through small consumer-side interfaces
// (Snapshotter, Engine, Reserver, Source) so the same daemon runs on a
// real Torque/Maui host, on captured fixtures in tests, and on a
// simulated site (agent/simsite) in the demo:
//
//	a, err := agent.New(cfg, agent.Deps{Conn: nc, Snapshotter: site, Engine: eng, Reserver: site})
//	err = a.Run(ctx) // until ctx is cancelled
//
// Run publishes a forecast at start, after every debounced burst of
// change events (Notify) and at every periodic refresh; it never builds two
// forecasts at once. The decisions (request validation, the stale re-check,
// the identical-forecast test) are pure functions of their inputs.
package agent

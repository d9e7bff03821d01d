// Package agent is the site daemon: it turns pbs_server events into
// snapshots, snapshots into forecasts (Maui SIMULATION or the built-in
// simulator), publishes them over NATS, and serves reserve/release/list
// requests from the broker through the Maui adapter.
package agent

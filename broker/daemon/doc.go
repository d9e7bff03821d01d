// Package daemon is the broker process: the thin NATS adapters around the
// pure core in package broker.
//
//   - forecasts: a Watch of the JetStream KV bucket of latest forecasts per
//     site (and heartbeats on the forecast subjects); a site silent for
//     longer than the TTL is out of planning and shown as stale;
//   - the grid queue: every change is an event appended to a JetStream
//     stream (submissions deduplicated by the client's request id) before it
//     takes effect; a restarted broker replays the stream;
//   - a micro service for submit, cancel, status, plan, sites and audit;
//   - the planning cycle (periodic, and debounced after a submission or a
//     forecast change) and the all-or-nothing commit protocol: an intent
//     event before the reserve requests, the outcome after; recovery rolls
//     back commits a dead broker left half done;
//   - the audit stream (append-only: delete and purge denied).
//
// Broker.Run(ctx) runs it all until ctx is cancelled.
package daemon

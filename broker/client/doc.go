// Package client is how the lookahead CLI (and the demo) talk to a running
// broker over NATS: submit (retried with one request id, so a retry never
// makes a second job), cancel, status, plan, sites, audit, and reading the
// audit trail from its JetStream stream.
package client

// Package demo runs the whole of lookahead in one process, on a machine
// with nothing but Go: an embedded NATS server with JetStream, four
// simulated sites (three Torque/Maui-kind, one Slurm-kind) whose local
// workloads are slices of real SWF traces (bundled), one agent per site,
// the broker with the co-allocation core, and a stream of grid jobs —
// some of which only fit across two sites. It prints what happens live
// and a summary at the end.
//
// It is the demo's composition root: it imports the agent and the broker,
// so it lives above them (not under internal/, the ground floor).
//
// Time runs accelerated: one real second is Speed simulated seconds, on one
// clock shared by the sites, their agents and the broker.
package demo

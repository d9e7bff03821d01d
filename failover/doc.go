// Package failover holds the fault tests of active and standby brokers
// (docs/broker.md, "Active and standby brokers"): a real three-node
// nats-server cluster in the process, two brokers and two agents on
// simulated sites, each fault once, and the invariants after each. The
// long run (LOOKAHEAD_FAILOVER_ROUNDS) repeats the broker kills and
// reports takeover times. It has no code outside its tests.
package failover

// Package wan holds the partition and latency tests of a grid whose sites
// sit behind NATS leaf nodes (docs/operations.md, "A site behind a
// firewall", and "Partitions and latency"): the network of
// internal/gridnet, built from the packaged configurations with a proxy
// on every leaf link, the real broker on the grid's servers and a real
// agent behind each site's leaf. Links are cut, stalled and slowed, and
// the failover suite's invariants checked after each. The soak
// (LOOKAHEADTEST_WAN_SOAK) repeats the faults; the commit benchmark weighs
// a commit across ten sites at a WAN round trip. It has no code outside
// its tests.
package wan

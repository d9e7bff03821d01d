// Package faultnet is a TCP proxy for tests that stands for a WAN link:
// it forwards connections to a target and can add latency, stall or cut
// them. The partition and latency tests put one on every leaf node link
// of their test network (internal/gridnet).
package faultnet

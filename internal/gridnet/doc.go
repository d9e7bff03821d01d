// Package gridnet builds, in the test process, a grid's NATS network from
// the packaged configurations of packaging/nats: three servers of one
// JetStream cluster (cluster.conf with grid.conf), and per site a leaf
// node (leaf.conf) whose link to every grid server runs through a TCP
// proxy that can add latency, stall or cut it (internal/faultnet). Sites
// other than grid.conf's alpha and beta are added to grid.conf as its
// comments tell an admin to. TLS on the leaf links uses a throw-away CA.
// For tests; nothing of it runs in a daemon.
package gridnet

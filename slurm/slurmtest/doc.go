// Package slurmtest starts a real, private Slurm for tests: munged with its
// own key and socket, slurmctld -i (on an empty state directory) and
// slurmd, all as root, on loopback ports of their own, with every file
// (configuration, state, spool, logs, PID files) in one temporary
// directory. The daemons run in the foreground as children of the test and
// are stopped by PID at cleanup, after every job was cancelled.
// RestartController restarts slurmctld on its saved state. A second Unix
// user (User2) exists for ACL tests.
//
// Start skips the test, saying why, where this cannot work: not root, the
// Debian packages missing (scripts/ensure-slurm.sh installs them), or a
// daemon that does not come up.
package slurmtest

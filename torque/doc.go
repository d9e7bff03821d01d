// Package torque holds everything lookahead reads from Torque (pbs_server):
// the lossless tailer of server_logs and accounting files, their record
// parsers for Torque 2.5, 4.2 and 6.1, the scheduler-port notification
// listener, and cluster snapshots from qstat -f -x and pbsnodes -x.
package torque

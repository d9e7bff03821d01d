// Package torque holds everything lookahead reads from Torque (pbs_server):
//
//   - Snapshots: Client runs `qstat -f -x -t` and `pbsnodes -x` through a
//     Runner (NewExecRunner: argv, timeout, process-group kill, bounded
//     stderr; NewFixtureRunner: captured outputs) and parses them with
//     ParseQstatXML / ParsePbsnodesXML into forecast.Snapshot. Exit codes
//     are classified (CommandError wrapping ErrUnknownJob, ErrInvalidState,
//     ErrNoNodes, ErrCommand).
//   - Log records: ParseLogLine reads server_logs lines of Torque 2.5, 4.2
//     and 6.1 (the format is detected per line), ParseAcctLine accounting
//     records; LogEvent and AcctEvent turn them into typed Events.
//   - Tailer: follows server_logs or server_priv/accounting with package
//     torque/tail and hands each Event to a Handler before its offset is
//     recorded.
//   - Listener: receives pbs_server's scheduler-port notifications (one
//     4-byte command per connection) as SchedulerNotified events.
//
// Parsers never exec, log or read the clock; times from the logs are read
// in a configured *time.Location and kept in UTC. See README.md for the
// tailer's flow and docs/torque.md for setup and version quirks.
package torque

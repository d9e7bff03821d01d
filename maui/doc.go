// Package maui holds everything lookahead says to or reads from the Maui
// scheduler 3.3.1:
//
//   - Runner, the one interface at every Maui/Torque command (argv, never a
//     shell), with an exec implementation (timeouts, process-group kill,
//     bounded stderr, MAUIHOMEDIR) and a fixture implementation serving
//     captured outputs;
//   - pure parsers (io.Reader in, values out) for showq, showq -i, showres,
//     showres -n, diagnose -r, setres and releaseres
//     replies, and v230 workload records (traces, stats/simstat.out);
//   - Client, the setres/showres/releaseres reservation client for grid
//     jobs (Reserve, List, Release), refusing bad requests with stable
//     Refusal codes before anything runs, binding each grid job's
//     reservations to its parts (required ACL entries and a pooled binding
//     account; QsubArgs is what the parts are submitted with), and listing
//     every reservation in force (Holds) for snapshots;
//   - trace and config writers, the SIMULATION runner (Simulator) and the
//     adaptive step policy that turn a forecast.Snapshot into predictions.
//
// See docs/maui.md for the behaviour of Maui 3.3.1 this relies on.
package maui

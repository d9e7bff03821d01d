// Package forecast owns lookahead's data model and the decisions that turn a
// cluster's state into what the grid sees:
//
//   - the v1 contracts that cross process boundaries: Forecast (a site's
//     nodes and priced slots), JobRequest (a grid job), Allocation (the
//     planner's answer for one job), with their JSON decoding and validation;
//   - Snapshot, the cluster state the Torque adapter delivers and the
//     forecasters consume;
//   - slot building from a predicted schedule, pricing, and the built-in
//     event-driven simulator.
//
// Everything here is pure: values in, values out, no I/O beyond io.Reader
// decoding, no clock reads (time is passed in), stdlib only.
package forecast

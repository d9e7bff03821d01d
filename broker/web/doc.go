// Package web serves the broker's live view for operators: a small page
// (HTML, CSS and JavaScript embedded in the binary, drawing in plain SVG,
// no outside resources) and the internal, read-only JSON API it polls
// under /api/ (unversioned: it changes with the page; scripts should use
// the NATS API of docs/broker.md).
//
// The decision cores (the Gantt's rows, why a job is not placed, access
// rules) are pure functions; Server is the thin HTTP adapter over a
// running broker's read-only views and its JetStream streams.
package web

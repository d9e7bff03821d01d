// Package plot writes the replay's pictures as standalone SVG (stdlib only):
// per-policy metric bars side by side, and a Gantt window of sites ×
// processors × time with local jobs, grid jobs and the unused tails of
// their reservations. Output is deterministic for the same input.
package plot

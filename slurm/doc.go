// Package slurm reads a Slurm cluster for lookahead: pure parsers of the
// clients' answers (sinfo --json and squeue --json in Slurm 22.05's
// OpenAPI 0.0.38, and the text of scontrol show reservation, which has no
// --json in 22.05), tested against real outputs captured from a private
// Slurm (testdata/README.md says how). Parsers never exec or log; optional
// fields are pointers; unknown fields are ignored.
//
// The test helper in slurm/slurmtest starts that private Slurm. What exists
// and what is planned is in docs/slurm.md.
package slurm

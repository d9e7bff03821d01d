// Package cli holds what the three binaries share at their edge: the one
// mapping from errors to exit codes, output format handling (-o table|json),
// and the signal-cancelled context every main runs under.
package cli

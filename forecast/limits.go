package forecast

import (
	"fmt"
	"math"
	"unicode"
)

// The model's limits, written once (docs/formats.md, "Limits of the
// model"). Every edge that takes a time, a duration, a processor count, a
// price or a name from outside (forecast, job request, snapshot, pricing,
// SWF trace, the CLI's flags) refuses a value outside them, naming the
// field; inside them no sum or product the code forms overflows: an instant
// plus a duration stays below 2^41, processors × seconds below 2^57, and a
// cost (price × processors × hours) is finite.
const (
	// MaxInstant bounds every time (Unix seconds, or seconds from a
	// trace's start): [0, 2^40], about the year 36,800.
	MaxInstant = int64(1) << 40
	// MaxDuration bounds every duration (walltime, run time, time used,
	// the CLI's --horizon): 2^32 s, about 136 years.
	MaxDuration = int64(1) << 32
	// MaxProcs bounds the processors of one node and of one job (grid
	// or local): 2^24.
	MaxProcs = 1 << 24
	// MaxClusterNodes bounds the nodes of one simulated cluster (a trace
	// replayed on single-processor nodes has one node per processor).
	MaxClusterNodes = 1 << 20
	// MaxPrice bounds every price and a job's max_price (credits per
	// CPU-hour). A displacement price the pricing would put above it is
	// not offered: no job may pay it.
	MaxPrice = 1e9
	// MinSpeed and MaxSpeed bound a node's speed and a job's min_speed
	// (0 for min_speed: any) relative to the reference CPU, so that a
	// walltime divided by a speed stays a duration.
	MinSpeed = 1e-3
	MaxSpeed = 1e3
	// MaxMemMB bounds memory in MB (a node's, a job's request): 2^40.
	MaxMemMB = int64(1) << 40
	// MaxNameBytes bounds a plain name (site, user, group, account, job
	// id, feature): see IsPlainName.
	MaxNameBytes = 64
	// MaxNodeNameBytes bounds a node's name (a host name) and a local
	// job's id (Torque's "123.server.domain").
	MaxNodeNameBytes = 255
	// MaxForecastNodes and MaxForecastSlots bound one forecast (what a
	// site may publish; wire enforces them on the broker's intake).
	MaxForecastNodes = 10_000
	MaxForecastSlots = 500_000
)

// inInstants reports whether t is a time of the model.
func inInstants(t int64) bool { return t >= 0 && t <= MaxInstant }

// inDuration reports whether d is a duration of the model (>= 0).
func inDuration(d int64) bool { return d >= 0 && d <= MaxDuration }

// goodPrice reports whether p is a price of the model.
func goodPrice(p float64) bool { return !math.IsNaN(p) && p >= 0 && p <= MaxPrice }

// goodSpeed reports whether s is a node speed of the model.
func goodSpeed(s float64) bool { return !math.IsNaN(s) && s >= MinSpeed && s <= MaxSpeed }

// Clip shortens s for an error message or a log line: at most n bytes
// (cut at a rune boundary) and a note of the full length, so a refusal
// never echoes a huge input back.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
}

// clipName is Clip for a name quoted in an error: a little over a plain
// name's bound.
func clipName(s string) string { return Clip(s, MaxNameBytes+16) }

// ValidNodeName reports whether s can be a node's name (a host name):
// 1 to MaxNodeNameBytes bytes of printable characters without spaces.
func ValidNodeName(s string) bool {
	if s == "" || len(s) > MaxNodeNameBytes {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// ValidSpeed reports whether s is a node speed of the model: a number in
// [MinSpeed, MaxSpeed].
func ValidSpeed(s float64) bool { return goodSpeed(s) }

package cputime

import "testing"

// TestUsedGrows: work done between two readings shows in the second.
func TestUsedGrows(t *testing.T) {
	before := Used()
	x := 0
	for i := range 50_000_000 {
		x ^= i * 7
	}
	after := Used()
	if after <= before || before <= 0 {
		t.Fatalf("CPU time %v then %v (%d)", before, after, x)
	}
}

package demo

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"lookahead/broker"
	"lookahead/forecast"
)

// Issue 23.6: the demo printed one rollback with raw Unix seconds among
// relative times.
func TestRollbackLineUsesRelativeTimes(t *testing.T) {
	origin := time.Unix(1763780000, 0)
	c := &Clock{origin: origin, real: func() time.Time { return origin.Add(90 * time.Second) }, speed: 60}
	var out bytes.Buffer
	p := newPrinter(&out, c, false)
	p.event(broker.Event{Kind: broker.EvOutcome, Job: "g7", Alloc: &forecast.Allocation{},
		Message: "beta: stale: n3 is busy from 1763783600 to 1763790800 (job 4242424242 of 1234567890)"})
	line := out.String()
	for _, want := range []string{"+01:00 to +03:00", "4242424242", "1234567890"} {
		if !strings.Contains(line, want) {
			t.Errorf("rollback line %q: want %q", line, want)
		}
	}
	if strings.Contains(line, "1763783600") {
		t.Errorf("rollback line %q keeps a raw Unix time", line)
	}
}

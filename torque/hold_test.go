package torque

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// Operator holds on the live Torque 6.1.3 (testdata/torque-6.1.3/live-hold,
// its README): qhold -h o of a queued job, qrls -h o of it, of a job no
// longer held (exit 70: nothing to release) and qhold of an unknown job
// (exit 153).
func TestHoldAndUnholdOnCapturedTorque(t *testing.T) {
	r, err := NewFixtureRunner("testdata/torque-6.1.3/live-hold")
	if err != nil {
		t.Fatal(err)
	}
	b := NewBatch(r, BatchConfig{Site: "vm"})
	ctx := context.Background()
	argv, err := b.Hold(ctx, "7.vm")
	if err != nil || !slices.Equal(argv, []string{"qhold", "-h", "o", "7.vm"}) {
		t.Fatalf("hold: %v %v", argv, err)
	}
	if _, err := b.Unhold(ctx, "7.vm"); err != nil { // 06: not held any more (exit 70)
		t.Fatalf("unhold of a job not held: %v", err)
	}
	if _, err := b.Hold(ctx, "9999.vm"); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("hold of an unknown job: %v", err)
	}
	if _, err := b.Hold(ctx, "7.vm; rm"); !errors.Is(err, ErrBadSpec) {
		t.Fatalf("a job id that is not one: %v", err)
	}
}

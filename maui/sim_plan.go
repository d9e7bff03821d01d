package maui

import "context"

// errDiverged is returned when Maui's schedule departs from the oracle's:
// the run is repeated with the plain exact stepping.
type errDiverged struct{ why string }

func (e *errDiverged) Error() string { return "maui departed from the simulator's plan: " + e.why }

// plannedPhase makes Maui iterate only where the oracle predicts a start
// (or a boundary is known), in batches (MergeStops): running through them
// (freePhase), or, with StopEach, stopping at each (one pass of its client
// loop, a 50 ms sleep: the state read at the stop goes with the step to
// the next one). Every read is checked against the oracle once served; a
// departure ends the run (errDiverged): an iteration may have been left
// out where Maui, unlike the simulator, would have started a job.
func (d *driver) plannedPhase(ctx context.Context) error {
	batches := MergeStops(d.t, d.oracle.Plan(d.events, d.p, d.horizon), IterationsPerStop)
	if d.free {
		return d.freePhase(ctx, batches)
	}
	d.batched = true
	defer func() { d.batched = false }()
	for _, b := range batches {
		at, to := d.t, d.t+b.Step*b.Iters
		d.skipped += d.endsBetween(at, to)
		if err := d.advance(ctx, b.Step, b.Iters, true); err != nil {
			return err
		}
		if why := d.oracle.Check(at, d.seen); why != "" {
			return &errDiverged{why}
		}
		d.pipelined++
		d.exactStops++
		d.merged += int(b.Iters) - 1
	}
	return nil
}

// endsBetween counts the known ends of running jobs in (from, to).
func (d *driver) endsBetween(from, to int64) int {
	n := 0
	for name := range d.running {
		if end := d.seen[name].start + d.tr.Jobs[name].Runtime; end > from && end < to {
			n++
		}
	}
	return n
}

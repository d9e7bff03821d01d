package maui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// The free-running planned phase. A stopped Maui sleeps 50 ms before each
// pass of its client loop (UIProcessClients, src/server/UserI.c); a
// running one serves, after every iteration, whatever waits in its accept
// queue, without sleeping. `schedctl -S kI` sets both the stop iteration
// and IgnoreToIteration (no client is served before it); a second
// `schedctl -S k+1` without I moves only the stop one iteration further.
// So at the end of a batch Maui serves the next batch at once, running —
// if the next batch is already queued. It is: its clients are started and
// held in their relays beforehand, and released the moment Maui answers
// the previous batch's first command (its accept pass is then over; the
// rest of the batch and an iteration lie ahead). If they come late anyway, the stop one iteration
// further catches Maui, the next read shows the clock one step off, and
// the run is repeated with a stop per batch (errLate).

// errLate: a batch reached Maui after the iteration it was meant for.
type errLate struct{ why string }

func (e *errLate) Error() string { return "a batch came late: " + e.why }

// batchCmds are one batch's commands, in the order Maui serves them.
type batchCmds struct {
	at, step, iters int64
	stop            bool // the last batch: Maui stops at its end
	cmds            []*armed
	param           bool
}

// freePhase runs the batches, each served while Maui runs.
func (d *driver) freePhase(ctx context.Context, batches []Batch) error {
	d.batched = true
	defer func() { d.batched = false }()
	var prev *batchCmds
	t := d.t
	for i, b := range batches {
		cur, err := d.armBatch(ctx, t, b, i == len(batches)-1)
		if err != nil {
			d.abandon(cur, prev)
			return err
		}
		if prev != nil {
			if err := d.waitAnswered(ctx, prev); err != nil {
				d.abandon(cur, prev)
				return err
			}
		}
		tr0 := time.Now()
		if err := releaseAll(cur.cmds); err != nil {
			d.abandon(cur, prev)
			return err
		}
		if debugTiming {
			fmt.Fprintf(os.Stderr, "REL %d at %d step %d iters %d cmds %d release %.2fms\n", i, t, b.Step, b.Iters, len(cur.cmds), float64(time.Since(tr0).Microseconds())/1000)
		}
		if prev != nil {
			if err := d.finishBatch(prev); err != nil {
				d.abandon(cur)
				return err
			}
		}
		d.skipped += d.endsBetween(t, t+b.Step*b.Iters)
		d.exactStops++
		d.pipelined++
		d.merged += int(b.Iters) - 1
		prev, t = cur, t+b.Step*b.Iters
		if d.step != b.Step {
			d.step = b.Step
		}
	}
	if prev != nil {
		if err := d.finishBatch(prev); err != nil {
			return err
		}
	}
	d.t, d.unread = t, true
	return nil
}

// armBatch starts a batch's clients, held: the state read at its start,
// the step, and the stop (for all but the last, the ignore point and the
// stop one iteration beyond).
func (d *driver) armBatch(ctx context.Context, at int64, b Batch, last bool) (*batchCmds, error) {
	bc := &batchCmds{at: at, step: b.Step, iters: b.Iters, stop: last}
	add := func(name string, args ...string) error {
		a, err := d.in.arm(ctx, name, args...)
		if a != nil {
			bc.cmds = append(bc.cmds, a)
		}
		return err
	}
	if err := add("showres", "-n"); err != nil {
		return bc, err
	}
	if b.Step != d.stepAt(at) {
		bc.param = true
		if err := add("changeparam", "RMPOLLINTERVAL", fmt.Sprint(b.Step)); err != nil {
			return bc, err
		}
	}
	if err := add("schedctl", "-S", fmt.Sprintf("%dI", b.Iters)); err != nil {
		return bc, err
	}
	if !last {
		if err := add("schedctl", "-S", fmt.Sprint(b.Iters+1)); err != nil {
			return bc, err
		}
	}
	return bc, nil
}

// stepAt is RMPOLLINTERVAL when the batch at `at` is served: the step of
// the batch before it (d.step is kept up to date as batches are armed).
func (d *driver) stepAt(int64) int64 { return d.step }

// waitAnswered waits until Maui answers the batch's first command: it
// accepts every queued connection before serving any, so its accept pass
// is then over, and the batch's other commands and an iteration lie
// ahead before its next one.
func (d *driver) waitAnswered(ctx context.Context, bc *batchCmds) error {
	first := bc.cmds[0]
	select {
	case <-first.held.answered:
		return nil
	case <-first.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d.in.callTimeout):
		return fmt.Errorf("schedctl: no answer within %v", d.in.callTimeout)
	}
}

// finishBatch reads a served batch's answers: the clock must be the
// batch's start (else it came late), the step and stops as sent, and what
// Maui started must be what the oracle predicts.
func (d *driver) finishBatch(bc *batchCmds) error {
	res := make([]Result, len(bc.cmds))
	for i, a := range bc.cmds {
		r, err := a.wait(d.in.callTimeout)
		if err != nil {
			return err
		}
		res[i] = r
	}
	d.t = bc.at
	if err := d.absorb(res[0], true); err != nil {
		if strings.Contains(err.Error(), "simulated clock at") {
			return &errLate{err.Error()}
		}
		return err
	}
	i := 1
	if bc.param {
		if !bytes.Contains(res[i].Stdout, []byte("parameters modified")) {
			return fmt.Errorf("changeparam RMPOLLINTERVAL %d: %s", bc.step, trimmed(append(res[i].Stdout, res[i].Stderr...)))
		}
		i++
	}
	want := []int64{bc.iters}
	if !bc.stop {
		want = append(want, bc.iters+1)
	}
	for _, k := range want {
		w := fmt.Sprintf("scheduling will stop in %s at iteration", stepDuration(bc.step*k))
		if !strings.Contains(strings.Join(strings.Fields(string(res[i].Stdout)), " "), w) {
			return &errLate{fmt.Sprintf("schedctl -S %d: want %q, got %q", k, w, trimmed(res[i].Stdout))}
		}
		i++
	}
	if why := d.oracle.Check(bc.at, d.seen); why != "" {
		return &errDiverged{why}
	}
	return nil
}

// abandon kills the clients of batches not finished.
func (d *driver) abandon(bcs ...*batchCmds) {
	for _, bc := range bcs {
		if bc != nil {
			abandon(bc.cmds)
		}
	}
}

var debugTiming = os.Getenv("H15TIMING") != ""

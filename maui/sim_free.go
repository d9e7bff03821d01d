package maui

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
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

// batchCmds are one batch's commands, in the order Maui serves them:
// changeparam (when the step changes), schedctl -S kI, schedctl -S k+1
// (all but the last batch), showres -n. The state read comes last: Maui
// formats it after the release trigger (the first answer), which leaves
// the next batch more time to reach the queue.
type batchCmds struct {
	at, step, iters int64
	stop, param     bool
	cmds            []*armed
	released        chan error
}

// armAhead is how many batches are armed ahead of the one Maui serves:
// starting a client takes longer than an iteration.
const armAhead = 6

type armedBatch struct {
	bc  *batchCmds
	err error
}

// armAll arms the batches in order into out (closed at the end or at the
// first error) and chains them: the first batch is released at once (Maui
// is stopped), each other one by its predecessor's first answer, in the
// relay's goroutine. stop ends it early.
func (d *driver) armAll(ctx context.Context, t, step int64, batches []Batch, out chan<- armedBatch, stop <-chan struct{}) {
	defer close(out)
	upstream := "127.0.0.1:" + strconv.Itoa(d.in.port)
	var prev *batchCmds
	for i, b := range batches {
		bc, err := d.armBatch(ctx, t, b, step, i == len(batches)-1)
		if err == nil {
			release := func() { bc.released <- releaseAll(upstream, bc.cmds, d.in.callTimeout) }
			if prev == nil {
				release()
			} else {
				prev.cmds[0].held.then(release)
			}
		}
		select {
		case out <- armedBatch{bc, err}:
		case <-stop:
			d.abandon(bc)
			return
		}
		if err != nil {
			return
		}
		prev, t, step = bc, t+b.Step*b.Iters, b.Step
	}
}

// freePhase runs the batches, each served while Maui runs.
func (d *driver) freePhase(ctx context.Context, batches []Batch) error {
	d.batched = true
	defer func() { d.batched = false }()
	ch := make(chan armedBatch, armAhead)
	stop := make(chan struct{})
	go d.armAll(ctx, d.t, d.step, batches, ch, stop)
	defer func() {
		close(stop)
		for ab := range ch {
			d.abandon(ab.bc)
		}
	}()
	var prev *batchCmds
	for i := range batches {
		ab, ok := <-ch
		if !ok {
			return fmt.Errorf("arming batch %d: ended early", i)
		}
		cur := ab.bc
		if ab.err != nil {
			d.abandon(cur, prev)
			return ab.err
		}
		select {
		case err := <-cur.released:
			if err != nil {
				d.abandon(cur, prev)
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d.in.callTimeout):
			d.abandon(cur, prev)
			return &errLate{fmt.Sprintf("batch at %+d s never released", cur.at)}
		}
		if prev != nil {
			if err := d.finishBatch(prev); err != nil {
				d.abandon(cur)
				return err
			}
		}
		b := batches[i]
		d.skipped += d.endsBetween(cur.at, cur.at+b.Step*b.Iters)
		d.exactStops++
		d.pipelined++
		d.merged += int(b.Iters) - 1
		prev = cur
	}
	if prev != nil {
		if err := d.finishBatch(prev); err != nil {
			return err
		}
		d.t, d.step, d.unread = prev.at+prev.step*prev.iters, prev.step, true
	}
	return nil
}

// armBatch starts a batch's clients, held (see batchCmds); prev is the
// step in force before it.
func (d *driver) armBatch(ctx context.Context, at int64, b Batch, prev int64, last bool) (*batchCmds, error) {
	bc := &batchCmds{at: at, step: b.Step, iters: b.Iters, stop: last, released: make(chan error, 1)}
	add := func(name string, args ...string) error {
		a, err := d.in.arm(ctx, name, args...)
		if a != nil {
			bc.cmds = append(bc.cmds, a)
		}
		return err
	}
	if b.Step != prev {
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
	return bc, add("showres", "-n")
}

// finishBatch reads a served batch's answers: the step and stops as sent,
// the clock at the batch's start (else it came late), and what Maui
// started must be what the oracle predicts.
func (d *driver) finishBatch(bc *batchCmds) error {
	res := make([]Result, len(bc.cmds))
	for i, a := range bc.cmds {
		r, err := a.wait(d.in.callTimeout)
		if err != nil {
			return err
		}
		res[i] = r
	}
	i := 0
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
	d.t = bc.at
	if err := d.absorb(res[i], true); err != nil {
		if strings.Contains(err.Error(), "simulated clock at") {
			return &errLate{err.Error()}
		}
		return err
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

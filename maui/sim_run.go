package maui

import (
	"context"
	"errors"
	"fmt"
	"lookahead/forecast"
	"os"
	"syscall"
)

// run simulates tr in a fresh private Maui: with the built-in
// simulator's plan unless the policy is Plain or the site uses a setting
// the simulator does not follow, and again with the plain exact stepping
// if Maui departs from the plan.
func (s *Simulator) run(ctx context.Context, tr Traces, holds []forecast.Reservation, site []byte, now, horizon int64) ([]forecast.Prediction, SimStats, error) {
	st := SimStats{Jobs: len(tr.Jobs)}
	if len(tr.Jobs) == 0 {
		return nil, st, nil
	}
	var orc *Oracle
	switch p := s.cfg.Policy.WithDefaults(); {
	case p.Plain:
		st.OracleOff = "plain stepping asked"
	case p.Near < 0:
		st.OracleOff = "no exact window"
	default:
		o, why, err := oracleFor(tr.Resource, tr.Workload, site, holds, s.Zone(), now, horizon-now)
		switch {
		case err != nil:
			st.OracleOff = err.Error()
		case why != "":
			st.OracleOff = why
		default:
			orc = &o
		}
	}
	preds, err := s.runOnce(ctx, tr, holds, site, now, horizon, orc, !s.cfg.Policy.StopEach, &st)
	var late *errLate
	for try := 0; errors.As(err, &late) && try < 2; try++ {
		// A batch came late (the machine was busy): once more running,
		// then with a stop per batch, which cannot come late.
		st.Late = late.why
		preds, err = s.runOnce(ctx, tr, holds, site, now, horizon, orc, try == 0 && !s.cfg.Policy.StopEach, &st)
	}
	var div *errDiverged
	if errors.As(err, &div) {
		st.Diverged = div.why
		preds, err = s.runOnce(ctx, tr, holds, site, now, horizon, nil, false, &st)
	}
	if err != nil {
		return nil, st, fmt.Errorf("%w: %v", ErrMauiFailed, err)
	}
	return preds, st, nil
}

// runOnce is one private Maui run, with orc's plan when it is set. Its
// counts add to st.
func (s *Simulator) runOnce(ctx context.Context, tr Traces, holds []forecast.Reservation, site []byte, now, horizon int64, orc *Oracle, free bool, st *SimStats) ([]forecast.Prediction, error) {
	if err := s.CheckInstall(); err != nil {
		return nil, err
	}
	home, err := s.prepareHome(tr)
	if err != nil {
		return nil, err
	}
	if !s.cfg.KeepHome {
		defer os.RemoveAll(home)
	}
	inst, err := s.start(ctx, home, len(tr.Jobs), site)
	if err != nil {
		return nil, err
	}
	defer inst.stop()
	d := newDriver(inst, tr, s.cfg.Policy, now, horizon)
	d.events = standingEdges(site, now, horizon, s.Zone())
	d.oracle, d.free = orc, free && orc != nil
	if d.free {
		lowerPriority(inst.cmd.Process.Pid)
	}
	preds, err := d.run(ctx, holds)
	inst.stop() // its CPU time is known once it has exited
	st.ExactStops += d.exactStops
	st.Pipelined += d.pipelined
	st.CoarseIters += d.coarseIters
	st.Commands += inst.commands
	st.Probes += d.probes
	st.Overshoots += d.overshoots
	st.SkippedEnds += d.skipped
	st.Merged += d.merged
	if orc != nil && err == nil {
		st.Planned = true
	}
	if ps := inst.cmd.ProcessState; ps != nil {
		st.MauiCPU += ps.UserTime() + ps.SystemTime()
	}
	var div *errDiverged
	var late *errLate
	if err != nil && !errors.As(err, &div) && !errors.As(err, &late) {
		err = fmt.Errorf("%v%s", err, inst.tail())
	}
	return preds, err
}

// lowerPriority makes the private Maui nicer than this process by
// niceBelow: while it runs through its stops (sim_free.go), the relay that
// queues the next batch must get the CPU before Maui's next iteration.
func lowerPriority(pid int) {
	r, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return
	}
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, pid, min(20-r+niceBelow, 19)) // Linux returns 20-nice
}

const niceBelow = 5

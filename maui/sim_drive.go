package maui

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"lookahead/forecast"
)

// driver steps one private Maui through a forecast. Times t are seconds
// from the simulation's first iteration (the snapshot's now).
type driver struct {
	in      *instance
	tr      Traces
	p       StepPolicy
	now     int64
	horizon int64 // relative
	c0      time.Time
	// wallStart is when the run began; the simulated clock starts there.
	wallStart time.Time
	t         int64
	step      int64
	unread    bool               // an iteration ran since the last state read
	seen      map[string]*jobObs // every job seen running
	running   map[string]bool    // running at the last read
	idle      map[string]bool    // not yet seen running
	events    []int64            // reservation boundaries (relative)
	// oracle, when set, is the built-in simulator's schedule of the same
	// traces: the exact phase stops only at its Plan and checks Maui
	// against it at every stop (oracle.go).
	oracle *Oracle

	exactStops, pipelined, coarseIters, probes, overshoots int
	skipped                                                int  // known ends the oracle's plan did not stop at
	merged                                                 int  // iterations run inside a batch, without a stop
	batched                                                bool // the planned phase runs: a batch of several iterations ignores clients until its stop
	free                                                   bool // the planned phase lets Maui run through its stops (sim_free.go)
}

type jobObs struct {
	start int64
	hosts map[string]int
}

func newDriver(in *instance, tr Traces, p StepPolicy, now, horizon int64) *driver {
	d := &driver{in: in, tr: tr, p: p, now: now, horizon: horizon - now,
		seen: map[string]*jobObs{}, running: map[string]bool{}, idle: map[string]bool{}, wallStart: time.Now()}
	for name := range tr.Jobs {
		d.idle[name] = true
	}
	return d
}

// run drives the simulation to the horizon and returns the predictions.
func (d *driver) run(ctx context.Context, holds []forecast.Reservation) ([]forecast.Prediction, error) {
	if err := d.read(ctx, true); err != nil {
		return nil, err
	}
	if err := d.checkLoaded(ctx); err != nil {
		return nil, err
	}
	if err := d.hold(ctx, holds); err != nil {
		return nil, err
	}
	if err := d.exactPhase(ctx); err != nil {
		return nil, err
	}
	if err := d.coarsePhase(ctx); err != nil {
		return nil, err
	}
	d.in.stop()
	recs, err := d.readStats()
	if err != nil {
		return nil, err
	}
	if d.oracle != nil {
		if why := d.oracle.CheckRecords(recs, d.c0.Unix(), d.p.WithDefaults().Near); why != "" {
			return nil, &errDiverged{why}
		}
	}
	return d.predictions(recs), nil
}

// exactPhase stops at every known event inside the near window, or,
// with an oracle, at every stop of its plan.
func (d *driver) exactPhase(ctx context.Context) error {
	if d.oracle != nil {
		return d.plannedPhase(ctx)
	}
	for {
		ev, ok := d.nextEvent()
		stop, exact := d.p.Next(d.t, ev, ok, d.horizon)
		if !exact {
			return nil
		}
		pipe := d.unread && CanPipeline(d.t, stop, d.minRunIdle())
		if d.unread && !pipe {
			// Read what started now together with a zero-length
			// iteration: one pass of Maui's client loop instead of a
			// read alone (which costs an extra 100 ms sleep). Nothing
			// changed since the pass at this same time, so the extra
			// pass starts nothing; absorb checks that.
			if err := d.advanceN(ctx, 0, 1, true); err != nil {
				return err
			}
			d.probes++
			continue // a job seen starting now may end sooner
		}
		if err := d.advance(ctx, stop-d.t, 1, pipe); err != nil {
			return err
		}
		if pipe {
			d.pipelined++
		}
		d.exactStops++
	}
}

// coarsePhase runs fixed steps to the horizon without client round trips,
// reading the state now and then (it is served between iterations).
func (d *driver) coarsePhase(ctx context.Context) error {
	if d.t >= d.horizon {
		if d.unread {
			return d.read(ctx, true)
		}
		return nil
	}
	k := (d.horizon - d.t + d.p.Coarse - 1) / d.p.Coarse
	target := d.t + k*d.p.Coarse
	at, withRead := d.t, d.unread
	if err := d.advanceN(ctx, d.p.Coarse, k, withRead); err != nil {
		return err
	}
	if d.oracle != nil && withRead {
		if why := d.oracle.Check(at, d.seen); why != "" {
			return &errDiverged{why}
		}
	}
	d.coarseIters += int(k)
	for {
		if err := d.read(ctx, false); err != nil {
			return err
		}
		if d.t >= target {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// advance moves the clock by gap in one iteration (see advanceN).
func (d *driver) advance(ctx context.Context, gap, iters int64, withRead bool) error {
	if err := d.advanceN(ctx, gap, iters, withRead); err != nil {
		return err
	}
	d.t += gap * iters
	d.unread = true
	return nil
}

// advanceN sends, in one batch Maui serves together, an optional state read
// (served first: the state before the step), changeparam RMPOLLINTERVAL
// when the step changes, and schedctl -S iters. Staggered starts keep the
// connections in that order; schedctl's reply, which names the step in
// force, proves it.
func (d *driver) advanceN(ctx context.Context, gap, iters int64, withRead bool) error {
	var read, param, step *pending
	var err error
	if withRead {
		if read, err = d.in.startQueued(ctx, "showres", "-n"); err != nil {
			return d.drain(err, read)
		}
	}
	if gap != d.step {
		if param, err = d.in.startQueued(ctx, "changeparam", "RMPOLLINTERVAL", fmt.Sprint(gap)); err != nil {
			return d.drain(err, read, param)
		}
	}
	arg := fmt.Sprint(iters)
	if d.batched && iters > 1 {
		// "I": Maui serves no client until the stop (UIProcessClients
		// returns at once while Iteration < IgnoreToIteration), so the
		// next batch, sent at once, waits for the stop instead of being
		// served between the batch's iterations.
		arg += "I"
	}
	if step, err = d.in.startQueued(ctx, "schedctl", "-S", arg); err != nil {
		return d.drain(err, read, param, step)
	}
	var readRes, paramRes, stepRes Result
	for _, w := range []struct {
		p   *pending
		res *Result
	}{{read, &readRes}, {param, &paramRes}, {step, &stepRes}} {
		if w.p == nil {
			continue
		}
		if *w.res, err = w.p.wait(d.in.callTimeout); err != nil {
			return err
		}
	}
	if param != nil && !bytes.Contains(paramRes.Stdout, []byte("parameters modified")) {
		return fmt.Errorf("changeparam RMPOLLINTERVAL %d: %s", gap, trimmed(append(paramRes.Stdout, paramRes.Stderr...)))
	}
	d.step = gap
	want := fmt.Sprintf("scheduling will stop in %s at iteration", stepDuration(gap*iters))
	if !strings.Contains(strings.Join(strings.Fields(string(stepRes.Stdout)), " "), want) {
		return fmt.Errorf("schedctl -S %d: want %q, got %q (step order lost)", iters, want, trimmed(stepRes.Stdout))
	}
	if withRead {
		return d.absorb(readRes, true)
	}
	return nil
}

// drain waits for commands already started before returning err.
func (d *driver) drain(err error, ps ...*pending) error {
	for _, p := range ps {
		if p != nil {
			_, _ = p.wait(d.in.callTimeout)
		}
	}
	return err
}

// stepDuration is how Maui prints a duration (MULToTString, 3.3.1):
// "00:00:07", "2:59:00", "1:02:00:00", "  INFINITY" from 100 days on.
func stepDuration(sec int64) string {
	if sec >= 8640000 {
		return "INFINITY"
	}
	days, h, m, s := sec/86400, sec/3600%24, sec/60%60, sec%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d:%02d:%02d:%02d", days, h, m, s)
	case sec/3600 >= 10:
		return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("00:%02d:%02d", m, s)
}

// read runs showres -n and takes in what it shows. check makes it an
// error when the clock is not where the stepping put it.
func (d *driver) read(ctx context.Context, check bool) error {
	res, err := d.in.run(ctx, "showres", "-n")
	if err != nil {
		return err
	}
	return d.absorb(res, check)
}

// absorb records what a `showres -n` shows: the clock and the running jobs
// with their start and per-node tasks.
func (d *driver) absorb(res Result, check bool) error {
	if res.ExitCode != 0 {
		return fmt.Errorf("showres -n: exit %d: %s", res.ExitCode, trimmed(res.Stderr))
	}
	sn, err := parseShowresNodesLoose(res.Stdout)
	if err != nil {
		return err
	}
	// Maui's simulated clock starts at the wall clock: stamps without a
	// year are placed near it (not near now, which may be any time).
	ref := d.wallStart
	at, err := ParseClock(sn.At, d.in.zone, ref)
	if err != nil {
		return fmt.Errorf("showres -n clock: %w", err)
	}
	if d.c0.IsZero() {
		d.c0 = at
	}
	clock := int64(at.Sub(d.c0) / time.Second)
	if check && clock != d.t {
		return fmt.Errorf("simulated clock at %+ds, stepping expected %+ds", clock, d.t)
	}
	if !check {
		d.t = clock
	}
	running := map[string]bool{}
	for _, r := range sn.Rows {
		if r.Type != "Job" || r.JobState != "Running" {
			continue
		}
		if _, ours := d.tr.Jobs[r.ID]; !ours {
			continue
		}
		o := d.seen[r.ID]
		if o == nil {
			st, err := ParseClock(r.StartTime, d.in.zone, ref)
			if err != nil {
				return fmt.Errorf("showres -n start of %s: %w", r.ID, err)
			}
			o = &jobObs{start: int64(st.Sub(d.c0) / time.Second), hosts: map[string]int{}}
			d.seen[r.ID] = o
			delete(d.idle, r.ID)
			if check && o.start+d.tr.Jobs[r.ID].Runtime < d.t {
				d.overshoots++ // its end passed unseen: the stepping was not exact
			}
		}
		if !running[r.ID] {
			o.hosts = map[string]int{}
		}
		o.hosts[r.Node] += r.Tasks
		running[r.ID] = true
	}
	d.running = running
	if check {
		d.unread = false
	}
	return nil
}

// parseShowresNodesLoose accepts the empty table Maui prints when nothing
// is reserved.
func parseShowresNodesLoose(b []byte) (ShowresNodes, error) {
	sn, err := ParseShowresNodes(bytes.NewReader(b))
	if err == nil {
		return sn, nil
	}
	s := string(b)
	if i := strings.Index(s, "reservations on "); i >= 0 && !strings.Contains(s, "NodeName") {
		at, _, _ := strings.Cut(s[i+len("reservations on "):], "\n")
		return ShowresNodes{At: strings.TrimSpace(at)}, nil
	}
	return sn, err
}

// nextEvent is the earliest known end of a running job, or reservation
// boundary, after t.
func (d *driver) nextEvent() (int64, bool) {
	best, ok := int64(math.MaxInt64), false
	for name := range d.running {
		if end := d.seen[name].start + d.tr.Jobs[name].Runtime; end > d.t && end < best {
			best, ok = end, true
		}
	}
	for _, e := range d.events {
		if e > d.t && e < best {
			best, ok = e, true
		}
	}
	return best, ok
}

// minRunIdle is the shortest runtime of the jobs that may have started
// unseen at t: not seen running, and not larger than the processors the
// known running jobs leave free at t (an upper bound on what is free).
func (d *driver) minRunIdle() int64 {
	free := d.tr.Procs
	for name := range d.running {
		if o := d.seen[name]; o.start+d.tr.Jobs[name].Runtime > d.t {
			free -= d.tr.Jobs[name].Tasks
		}
	}
	m := int64(math.MaxInt64)
	for name := range d.idle {
		if j := d.tr.Jobs[name]; j.Tasks <= free || d.tr.Procs == 0 {
			m = min(m, j.Runtime)
		}
	}
	return m
}

// checkLoaded makes sure Maui simulates every job of the traces: each is
// in showq after the first iteration (Maui drops a job it finds corrupt,
// e.g. "invalid task layout"), and each running job started at once on
// its hosts. A forecast missing jobs would show their processors free.
func (d *driver) checkLoaded(ctx context.Context) error {
	res, err := d.in.run(ctx, "showq")
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("showq: exit %d: %s", res.ExitCode, trimmed(res.Stderr))
	}
	q, err := ParseShowq(bytes.NewReader(res.Stdout))
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, j := range append(append(append([]QueueJob{}, q.Active...), q.Idle...), q.Blocked...) {
		known[j.Name] = true
	}
	var dropped, stuck, names []string
	for name, tj := range d.tr.Jobs {
		switch {
		case !known[name]:
			dropped = append(dropped, name+" ("+d.tr.IDs[name]+")")
		case tj.Class == RunningClass && d.seen[name] == nil:
			stuck = append(stuck, name+" ("+d.tr.IDs[name]+")")
			names = append(names, "'"+name+"'")
		}
	}
	sort.Strings(dropped)
	sort.Strings(stuck)
	switch {
	case len(dropped) > 0:
		return fmt.Errorf("loading the trace, Maui dropped %d of %d jobs: %s%s", len(dropped), len(d.tr.Jobs),
			strings.Join(dropped, ", "), d.in.logLines("ignoring job"))
	case len(stuck) > 0:
		return fmt.Errorf("at the start, Maui did not start %d running job(s) on their hosts: %s%s", len(stuck), strings.Join(stuck, ", "),
			d.in.logLines(names...))
	}
	return nil
}

// hold reproduces the snapshot's reservations in force in the simulation:
// processors held from their start to their end by an identity no job has.
func (d *driver) hold(ctx context.Context, holds []forecast.Reservation) error {
	for i, h := range holds {
		start, end := h.Start-d.now, h.End-d.now
		if end <= 0 || len(h.Hosts) == 0 {
			continue
		}
		for _, call := range plan(h.Hosts) {
			args := []string{"-u", "lookahead_hold", "-n", fmt.Sprintf("hold%d", i), "-s", "+" + FormatDuration(max(start, 0)),
				"-d", FormatDuration(end - max(start, 0)), "-r", fmt.Sprintf("PROCS=%d", call.procs), nodePattern(call.nodes)}
			res, err := d.in.run(ctx, "setres", args...)
			if err != nil {
				return err
			}
			if _, err := ParseSetres(bytes.NewReader(res.Stdout)); err != nil || res.ExitCode != 0 {
				return fmt.Errorf("hold reservation %s: setres %s: %s", h.ID, strings.Join(args, " "), trimmed(append(res.Stderr, res.Stdout...)))
			}
		}
		d.events = append(d.events, max(start, 0), end)
	}
	return nil
}

// readStats reads stats/simstat.out, complete once Maui has stopped.
func (d *driver) readStats() ([]WorkloadRecord, error) {
	b, err := os.ReadFile(filepath.Join(d.in.home, "stats", "simstat.out"))
	if err != nil {
		return nil, fmt.Errorf("simstat.out: %w", err)
	}
	return ParseWorkload(bytes.NewReader(b))
}

// predictions joins what was observed and simstat.out into predictions of
// jobs starting before the horizon.
func (d *driver) predictions(recs []WorkloadRecord) []forecast.Prediction {
	c0 := d.c0.Unix()
	for _, r := range recs {
		if _, ours := d.tr.Jobs[r.ID]; !ours || d.seen[r.ID] != nil {
			continue
		}
		d.seen[r.ID] = &jobObs{start: r.Start - c0, hosts: spread(r.Hosts, d.tr.Jobs[r.ID].Tasks)}
	}
	var out []forecast.Prediction
	for name, o := range d.seen {
		if o.start >= d.horizon {
			continue
		}
		tj := d.tr.Jobs[name]
		p := forecast.Prediction{Job: d.tr.IDs[name], Start: d.now + o.start, End: d.now + o.start + tj.Runtime}
		for n, k := range o.hosts {
			p.Hosts = append(p.Hosts, forecast.HostProcs{Node: n, Procs: k})
		}
		sort.Slice(p.Hosts, func(i, j int) bool { return p.Hosts[i].Node < p.Hosts[j].Node })
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Start != out[j].Start {
			return out[i].Start < out[j].Start
		}
		return out[i].Job < out[j].Job
	})
	return out
}

// spread divides tasks over hosts as evenly as possible (simstat.out lists
// a job's nodes, not its tasks per node).
func spread(hosts []string, tasks int) map[string]int {
	out := map[string]int{}
	if len(hosts) == 0 {
		return out
	}
	for i := range tasks {
		out[hosts[i%len(hosts)]]++
	}
	return out
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"lookahead/internal/cli"
	"lookahead/internal/durfmt"
	"lookahead/replay"
	"lookahead/replay/plot"
)

type replayOptions struct {
	scenario string
	output   string
	plot     string
	traceDir string
	policies []string
	seeds    int
	parallel int
	start    string
	progress string
	// study: the report over seeds with every broker against the best
	// simple one, for each scenario named (replay_study.go)
	study     bool
	scenarios []string
	records   string // a directory for every run's job records (CSV)
}

func newReplayCommand() *cobra.Command {
	o := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay --scenario FILE.yaml | --study FILE.yaml...",
		Short: "Replay sites and a grid job stream over real traces and compare broker policies",
		Long: `Replay several sites over time: each runs its local workload (SWF traces)
through the built-in simulator and publishes forecasts; a broker places a
grid job stream with each named strategy (lookahead — the default
criterion, free-first —, lookahead-held (least-held), lookahead-start, lookahead-finish,
single-site-earliest, greedy-multisite, cheap, mct, cheap-sort, mct-sort),
reserving at the commit lead time. Prints one row per strategy and sweep
point: grid and local AWRT/AWWT, bounded slowdown, utilization, density,
grid jobs that never found room, local jobs' extra wait against the same
replay without grid jobs, credits paid, what each site's owner earned, and
conservation check failures. --seeds N repeats the study under N seeds and
prints mean [min–max] per point and strategy.

--study runs every scenario named (arguments, or --scenario) under --seeds
seeds (default 3) and reports per point each broker's grid AWRT and its
ratio to the best simple broker (single-site-earliest or greedy-multisite),
local jobs' extra wait against single-site's, multi-site jobs, credits paid
and reserved and what each owner earned, and where the default broker
(lookahead) gains or loses against the best simple broker, by job class
(width × run time).

Trace paths in the scenario are relative to the scenario file; a trace not
found there is looked up by file name in --trace-dir. See docs/replay.md.`,
		Example: `  lookahead replay --scenario examples/replay/seed004-broker.yaml
  lookahead replay --scenario examples/replay/seed002-multisite.yaml -o json --plot seed002.svg
  nice -n 10 lookahead replay --study examples/replay/study-*.yaml --parallel 2`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && !o.study {
				return cli.Usagef("replay: arguments %v: scenario files are arguments only with --study (else --scenario FILE)", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.study {
				if !cmd.Flags().Changed("seeds") {
					o.seeds = 3
				}
				if o.scenario != "" {
					o.scenarios = append(o.scenarios, o.scenario)
				}
				o.scenarios = append(o.scenarios, args...)
				return runStudy(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
			}
			if o.scenario == "" {
				return cli.Usagef("replay: --scenario is required (or --study FILE...)")
			}
			return runReplay(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.scenario, "scenario", "", "scenario file (YAML)")
	f.StringVar(&o.plot, "plot", "", "also write an SVG picture (metric bars and a Gantt window) to this file")
	f.StringVar(&o.traceDir, "trace-dir", "", "directory to find traces in by file name when a scenario path does not exist")
	f.StringSliceVar(&o.policies, "policy", nil, "run only these strategies (default: the scenario's list)")
	f.IntVar(&o.seeds, "seeds", 1, "run the study under this many seeds (the scenario's seed, +1, ...) and print mean [min–max] per point and strategy")
	f.StringVar(&o.start, "start", "", "the replay's start on the wall clock (Unix seconds or RFC 3339; default: the scenario's start, else the first replayed job's time on its trace's clock, from the SWF header's UnixStartTime)")
	f.IntVar(&o.parallel, "parallel", 1, "run this many replays at once (the results do not depend on it; each takes a core)")
	f.StringVar(&o.records, "records", "", "write every run's job records into this directory (created if missing; checked before the runs), one CSV file per scenario, seed, point and strategy: id,grid,procs,submit,start,end,sites,credits (times in Unix seconds; per-job evidence)")
	f.BoolVar(&o.study, "study", false, "report every scenario named (arguments) over --seeds seeds (default 3): every broker against the best simple one, by job class")
	cli.AddProgressFlag(cmd, &o.progress)
	cli.AddOutputFlag(cmd, &o.output)
	return cmd
}

// Bounds of replay's counts (each seed is a whole study; each worker a
// goroutine with its own replay).
const (
	maxSeeds    = 1000
	maxParallel = 1024
)

func runReplay(ctx context.Context, stdout, stderr io.Writer, o *replayOptions) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	if err := checkRunFlags(o); err != nil {
		return err
	}
	sc, in, err := prepareScenario(stderr, o, o.scenario)
	if err != nil {
		return err
	}
	scs, seeds := underSeeds(sc, o.seeds)
	if err := checkWorkload(stderr, o.scenario, scs, in); err != nil {
		return err
	}
	reps, err := runStudies(ctx, stderr, o, scs, in)
	if err != nil {
		return err
	}
	rep := reps[0]
	if o.plot != "" {
		if err := writePlot(o.plot, sc, rep); err != nil {
			return err
		}
	}
	if err := writeRecords(ctx, stderr, o.records, scs, reps); err != nil {
		return err
	}
	if err := writeReplayOutput(stdout, o, seeds, reps); err != nil {
		return err
	}
	if o.output != cli.FormatJSON {
		writeTableKey(stdout, scs[:1])
	}
	for _, r := range reps {
		if err := checkViolations(r); err != nil {
			return err
		}
	}
	return nil
}

// checkRunFlags checks the counts and the progress mode.
func checkRunFlags(o *replayOptions) error {
	if o.seeds < 1 || o.seeds > maxSeeds {
		return cli.Usagef("replay: --seeds %d: must lie in [1, %d]", o.seeds, maxSeeds)
	}
	if o.parallel < 1 || o.parallel > maxParallel {
		return cli.Usagef("replay: --parallel %d: must lie in [1, %d]", o.parallel, maxParallel)
	}
	if _, err := cli.Progress(o.progress, io.Discard, ""); err != nil {
		return err
	}
	return checkPlotPath(o)
}

// checkPlotPath checks before the runs that --plot can be written: one
// scenario's picture, a file in a directory that exists.
func checkPlotPath(o *replayOptions) error {
	if o.plot == "" {
		return nil
	}
	if o.study {
		return cli.Usagef("--plot %s: draws one scenario's runs: use it with --scenario, not --study", o.plot)
	}
	if st, err := os.Stat(o.plot); err == nil && st.IsDir() {
		return cli.Usagef("--plot %s: is a directory, want the SVG file's path", o.plot)
	}
	if st, err := os.Stat(filepath.Dir(o.plot)); err != nil || !st.IsDir() {
		return cli.Usagef("--plot %s: directory %s does not exist", o.plot, filepath.Dir(o.plot))
	}
	return nil
}

// prepareScenario loads, checks and completes one scenario file and its
// traces, with --policy and --start applied, on its wall clock.
func prepareScenario(stderr io.Writer, o *replayOptions, path string) (replay.Scenario, replay.Inputs, error) {
	sc, err := loadScenario(path)
	if err != nil {
		return replay.Scenario{}, replay.Inputs{}, err
	}
	if len(o.policies) > 0 {
		sc.Policies = o.policies
		sc.Plot.Policy = ""
	}
	if sc.Name == "" { // the name reports and --records files go by
		sc.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	sc = sc.WithDefaults()
	if err := sc.Validate(); err != nil {
		return replay.Scenario{}, replay.Inputs{}, cli.UsageError{Err: fmt.Errorf("scenario %s: %w", path, err)}
	}
	in, err := loadTraces(stderr, path, sc, o.traceDir)
	if err != nil {
		return replay.Scenario{}, replay.Inputs{}, err
	}
	if o.start != "" {
		if sc.Start, err = parseStart(o.start); err != nil || sc.Start == 0 {
			return replay.Scenario{}, replay.Inputs{}, cli.Usagef("--start %q: want Unix seconds after 0 or an RFC 3339 time (0, as an unset start, is the trace's own clock)", o.start)
		}
	}
	return sc.OnClock(in), in, nil
}

// underSeeds is the scenario under its seed and the n−1 next ones.
func underSeeds(sc replay.Scenario, n int) ([]replay.Scenario, []int) {
	scs := make([]replay.Scenario, n)
	seeds := make([]int, n)
	for k := range n {
		scs[k] = sc
		scs[k].Seed = sc.Seed + int64(k)
		seeds[k] = int(scs[k].Seed)
	}
	return scs, seeds
}

// studyOptions are the runs' options with the --progress bar; done ends
// the bar's line.
func studyOptions(ctx context.Context, stderr io.Writer, o *replayOptions) (replay.Options, func(), error) {
	opts := replay.Options{Context: ctx, Workers: o.parallel}
	bar, err := cli.Progress(o.progress, stderr, "runs")
	if err != nil || bar == nil {
		return opts, func() {}, err
	}
	opts.Progress = bar
	return opts, func() { fmt.Fprintln(stderr) }, nil
}

// checkWorkload builds each seed's and point's workload before the runs:
// a workload with no job at all, or whose every grid job no set of sites
// can hold within the forecast horizon, is an error naming the key to
// change; grid jobs some of which never fit are a warning on stderr (the
// broker refuses them at submit, and so does the replay).
func checkWorkload(stderr io.Writer, path string, scs []replay.Scenario, in replay.Inputs) error {
	warnShortSlices(stderr, path, scs[0], in)
	n, grid, longest := 0, 0, int64(0)
	for _, sc := range scs {
		for _, p := range sc.Points() {
			at := sc.At(p)
			w, err := replay.BuildWorkload(at, in)
			if err != nil {
				return cli.UsageError{Err: fmt.Errorf("scenario %s: %w", path, err)}
			}
			if err := someJob(at, w); err != nil {
				return cli.UsageError{Err: fmt.Errorf("scenario %s: %w", path, err)}
			}
			grid += len(w.Grid)
			for _, j := range w.Grid {
				if replay.NeverFits(at, j) {
					n, longest = n+1, max(longest, j.Req.Walltime)
				}
			}
		}
	}
	if n == 0 {
		return nil
	}
	horizon := durfmt.Seconds(scs[0].Forecast.Horizon.Seconds())
	if n == grid {
		return cli.Usagef("scenario %s: forecast.horizon %s: not one of the %d grid jobs (over %d seed(s) × %d point(s)) fits: each asks more processors for its walltime than any set of sites can hold within the horizon; raise forecast.horizon (the longest walltime is %s) or add sites",
			path, horizon, grid, len(scs), len(scs[0].Points()), durfmt.Seconds(longest))
	}
	fmt.Fprintf(stderr, "warning: %s: %d grid jobs (over %d seed(s) × %d point(s)) ask more processors for their walltime than any set of sites can hold within the forecast horizon (%s; the longest walltime %s): refused at submit, as the broker refuses them\n",
		path, n, len(scs), len(scs[0].Points()), horizon, durfmt.Seconds(longest))
	return nil
}

// warnShortSlices says when a trace has fewer usable records after its
// skip than jobs asks for: the replay takes what there is.
func warnShortSlices(stderr io.Writer, path string, sc replay.Scenario, in replay.Inputs) {
	type slice struct {
		key, trace string
		skip, jobs int
	}
	slices := []slice{{"local.jobs", sc.Local.Trace, sc.Local.Skip, sc.Local.Jobs}, {"grid.jobs", sc.Grid.Trace, sc.Grid.Skip, sc.Grid.Jobs}}
	for i, s := range sc.Sites {
		slices = append(slices, slice{fmt.Sprintf("local.jobs (for sites[%d].trace)", i), s.Trace, sc.Local.Skip, sc.Local.Jobs})
	}
	for _, s := range slices {
		if have := len(in.Traces[s.trace]) - s.skip; s.trace != "" && s.jobs > 0 && have < s.jobs {
			fmt.Fprintf(stderr, "warning: %s: %s %d: trace %s has only %d usable records after skip %d; replaying those\n",
				path, s.key, s.jobs, s.trace, max(have, 0), s.skip)
		}
	}
}

// someJob refuses a workload without a single job: its slices of the
// traces (skip, jobs) select nothing.
func someJob(sc replay.Scenario, w replay.Workload) error {
	if len(w.Grid) > 0 {
		return nil
	}
	for _, l := range w.Local {
		if len(l) > 0 {
			return nil
		}
	}
	return fmt.Errorf("no job to replay: local.skip %d, grid.skip %d and the traces' usable records select none (%d left out by the width rules)",
		sc.Local.Skip, sc.Grid.Skip, w.Dropped)
}

// writeReplayOutput prints one study's table (or report), or with several
// seeds the rows over the seeds.
func writeReplayOutput(stdout io.Writer, o *replayOptions, seeds []int, reps []replay.Report) error {
	switch {
	case len(reps) == 1 && o.output == cli.FormatJSON:
		return cli.WriteJSON(stdout, reps[0])
	case len(reps) == 1:
		return writeReplayTable(stdout, reps[0])
	case o.output == cli.FormatJSON:
		return cli.WriteJSON(stdout, seedReport{Seeds: seeds, Reports: reps, Rows: aggregateSeeds(reps)})
	}
	return writeSeedTable(stdout, seeds, aggregateSeeds(reps))
}

// writeTableKey says under a table whose sites "earned by site" lists, in
// its order, and where the columns are defined.
func writeTableKey(w io.Writer, scs []replay.Scenario) {
	for _, sc := range scs {
		names := make([]string, len(sc.Sites))
		for i, s := range sc.Sites {
			names[i] = s.Name
		}
		fmt.Fprintf(w, "earned by site (%s): %s\n", sc.Name, strings.Join(names, "/"))
	}
	fmt.Fprintln(w, "AWRT, AWWT: average weighted response and wait time (weights: processors × run time); BSLD: bounded slowdown; local +wait: local jobs' mean extra wait against the same replay without grid jobs; see docs/replay.md, Metrics")
}

// checkViolations fails the command when a replay broke a conservation law.
func checkViolations(rep replay.Report) error {
	for _, r := range rep.Results {
		if r.Checks.Count > 0 {
			return fmt.Errorf("%s %s: %d conservation check failures: %s", r.Policy, r.Label, r.Checks.Count, strings.Join(r.Checks.Violations, "; "))
		}
	}
	return nil
}

func writePlot(path string, sc replay.Scenario, rep replay.Report) error {
	var g *plot.Gantt
	for _, r := range rep.Results {
		if r.Policy == sc.Plot.Policy {
			gt := replay.Gantt(sc, r, sc.Plot.From.Seconds(), sc.Plot.Length.Seconds())
			g = &gt
			break
		}
	}
	var buf bytes.Buffer
	if err := plot.Write(&buf, "lookahead replay: "+sc.Name, replay.Charts(rep), g); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := writeFileWhole(path, buf.Bytes()); err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	return nil
}

func writeReplayTable(w io.Writer, rep replay.Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "point\tpolicy\tgrid (jobs)\tgrid AWRT (s)\tgrid AWWT (s)\tgrid BSLD (×)\tmulti-site (jobs)\tunplaced (jobs)\trefused (jobs)\tlocal (jobs)\tlocal AWRT (s)\tlocal +wait (s)\tutil (0-1)\tdensity (0-1)\tpaid (credits)\tearned by site (credits)\tcheck failures\t")
	for _, r := range rep.Results {
		m := r.Metrics
		label := r.Label
		if label == "" {
			label = "-"
		}
		earned := make([]string, len(m.SiteEarnings))
		for i, e := range m.SiteEarnings {
			earned[i] = fmt.Sprintf("%.0f", e)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.0f\t%.2f\t%d\t%d\t%d\t%d\t%.0f\t%.0f\t%.3f\t%.3f\t%.0f\t%s\t%d\t\n",
			label, r.Policy, m.Grid.Jobs, m.Grid.AWRT, m.Grid.AWWT, m.Grid.MeanBSLD, r.Stats.MultiSite, m.Unplaced, m.Refused,
			m.Local.Jobs, m.Local.AWRT, m.LocalExtraWait, m.Utilization, m.Density, m.Credits, strings.Join(earned, "/"), r.Checks.Count)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

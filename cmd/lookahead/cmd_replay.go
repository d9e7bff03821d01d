package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"lookahead/internal/cli"
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
}

func newReplayCommand() *cobra.Command {
	o := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay --scenario FILE.yaml",
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

Trace paths in the scenario are relative to the scenario file; a trace not
found there is looked up by file name in --trace-dir. See docs/replay.md.`,
		Example: `  lookahead replay --scenario examples/replay/seed004-broker.yaml
  lookahead replay --scenario examples/replay/seed002-multisite.yaml -o json --plot seed002.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	cli.AddProgressFlag(cmd, &o.progress)
	_ = cmd.MarkFlagRequired("scenario")
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
	if o.seeds < 1 || o.seeds > maxSeeds {
		return cli.Usagef("replay: --seeds %d: must lie in [1, %d]", o.seeds, maxSeeds)
	}
	if o.parallel < 1 || o.parallel > maxParallel {
		return cli.Usagef("replay: --parallel %d: must lie in [1, %d]", o.parallel, maxParallel)
	}
	if _, err := cli.Progress(o.progress, io.Discard, ""); err != nil {
		return err
	}
	sc, err := loadScenario(o.scenario)
	if err != nil {
		return err
	}
	if len(o.policies) > 0 {
		sc.Policies = o.policies
		sc.Plot.Policy = ""
	}
	sc = sc.WithDefaults()
	if err := sc.Validate(); err != nil {
		return cli.UsageError{Err: fmt.Errorf("scenario %s: %w", o.scenario, err)}
	}
	in, err := loadTraces(sc, filepath.Dir(o.scenario), o.traceDir)
	if err != nil {
		return err
	}
	if o.start != "" {
		if sc.Start, err = parseStart(o.start); err != nil || sc.Start == 0 {
			return cli.Usagef("--start %q: want Unix seconds after 0 or an RFC 3339 time (0, as an unset start, is the trace's own clock)", o.start)
		}
	}
	sc = sc.OnClock(in)
	nSeeds := o.seeds
	opts := replay.Options{Context: ctx}
	bar, err := cli.Progress(o.progress, stderr, "runs")
	if err != nil {
		return err
	}
	if bar != nil {
		opts.Progress = bar
	}
	opts.Workers = o.parallel
	scs := make([]replay.Scenario, nSeeds)
	seeds := make([]int, nSeeds)
	for k := range nSeeds {
		scs[k] = sc
		scs[k].Seed = sc.Seed + int64(k)
		seeds[k] = int(scs[k].Seed)
	}
	reps, err := replay.Studies(scs, in, opts)
	if bar != nil {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	rep := reps[0]
	if o.plot != "" {
		if err := writePlot(o.plot, sc, rep); err != nil {
			return err
		}
	}
	if err := writeReplayOutput(stdout, o, seeds, reps); err != nil {
		return err
	}
	for _, r := range reps {
		if err := checkViolations(r); err != nil {
			return err
		}
	}
	return nil
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

// checkViolations fails the command when a replay broke a conservation law.
func checkViolations(rep replay.Report) error {
	for _, r := range rep.Results {
		if r.Checks.Count > 0 {
			return fmt.Errorf("%s %s: %d conservation check failures: %s", r.Policy, r.Label, r.Checks.Count, strings.Join(r.Checks.Violations, "; "))
		}
	}
	return nil
}

// loadScenario reads a YAML scenario, refusing unknown fields.
func loadScenario(path string) (replay.Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return replay.Scenario{}, cli.UsageError{Err: fmt.Errorf("scenario: %w", err)}
	}
	var sc replay.Scenario
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil {
		var doc yaml.Node
		if yaml.Unmarshal(b, &doc) == nil {
			if key := yamlKeyOf(&doc, reflect.TypeOf(sc)); key != "" {
				return replay.Scenario{}, cli.UsageError{Err: fmt.Errorf("scenario %s: %s: %w", path, key, err)}
			}
		}
		return replay.Scenario{}, cli.UsageError{Err: fmt.Errorf("scenario %s: %w", path, err)}
	}
	return sc, nil
}

// loadTraces reads every trace the scenario names.
func loadTraces(sc replay.Scenario, base, dir string) (replay.Inputs, error) {
	in := replay.Inputs{Traces: map[string][]replay.TraceJob{}, Origins: map[string]int64{}}
	paths := []string{sc.Local.Trace, sc.Grid.Trace}
	for _, s := range sc.Sites {
		paths = append(paths, s.Trace)
	}
	for _, p := range paths {
		if p == "" || in.Traces[p] != nil {
			continue
		}
		jobs, origin, err := readReplayTrace(resolveTrace(p, base, dir))
		if err != nil {
			return replay.Inputs{}, err
		}
		in.Traces[p], in.Origins[p] = jobs, origin
	}
	return in, nil
}

func resolveTrace(p, base, dir string) string {
	full := p
	if !filepath.IsAbs(p) {
		full = filepath.Join(base, p)
	}
	if _, err := os.Stat(full); err != nil && dir != "" {
		return filepath.Join(dir, filepath.Base(p))
	}
	return full
}

// readReplayTrace reads an SWF trace, gunzipping a .gz file, and where its
// time 0 is on the wall clock.
func readReplayTrace(path string) ([]replay.TraceJob, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, cli.UsageError{Err: fmt.Errorf("trace: %w", err)}
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, 0, cli.UsageError{Err: fmt.Errorf("trace %s: %w", path, err)}
		}
		defer gz.Close()
		r = gz
	}
	jobs, st, err := replay.ReadSWF(r)
	if err != nil {
		return nil, 0, cli.UsageError{Err: fmt.Errorf("trace %s: %w", path, err)}
	}
	if err := noRecords(path, st.Jobs+st.Skipped); err != nil {
		return nil, 0, err
	}
	return jobs, st.Origin, nil
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
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

func writeReplayTable(w io.Writer, rep replay.Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "point\tpolicy\tgrid jobs\tgrid AWRT\tgrid AWWT\tgrid BSLD\tmulti-site\tunplaced\tlocal jobs\tlocal AWRT\tlocal +wait\tutil\tdensity\tcredits\tearned by site\tchecks\t")
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.0f\t%.2f\t%d\t%d\t%d\t%.0f\t%.0f\t%.3f\t%.3f\t%.0f\t%s\t%d\t\n",
			label, r.Policy, m.Grid.Jobs, m.Grid.AWRT, m.Grid.AWWT, m.Grid.MeanBSLD, r.Stats.MultiSite, m.Unplaced,
			m.Local.Jobs, m.Local.AWRT, m.LocalExtraWait, m.Utilization, m.Density, m.Credits, strings.Join(earned, "/"), r.Checks.Count)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

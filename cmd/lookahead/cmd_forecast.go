package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/cli"
	"lookahead/internal/config"
	"lookahead/internal/durfmt"
)

type forecastOptions struct {
	snapshot    string
	horizon     time.Duration
	now         int64
	policy      string
	pricing     string
	predictions string
	output      string
}

func newForecastCommand() *cobra.Command {
	var o forecastOptions
	cmd := &cobra.Command{
		Use:   "forecast --snapshot snap.json [--horizon 48h] [--pricing pricing.yaml] [-o json]",
		Short: "Forecast a cluster from a snapshot and print its priced slots (v1 forecast)",
		Long: `forecast runs the built-in simulator forward from a cluster snapshot (the
JSON the agent's Torque or Slurm adapter produces; see docs/simulator.md) assuming
every job runs its full walltime, and prints the v1 forecast: the usable
nodes and, per node, the slots of the horizon that running jobs and
reservations do not hold. Free time is priced at the pricing file's base
price; time a queued local job is predicted to hold is offered at the price
its rule gives (or not at all). Down and offline nodes yield no slots.

The pricing file is YAML (or JSON when it ends in .json):

  base: 1.0                      # credits per CPU-hour for free time
  default: {multiplier: 2, per_priority: 0.01, max: 10}
  rules:                         # first match wins
    - queue: low                 # displacing queue low costs 2x base
      multiplier: 2
    - queue: urgent              # never offer queue urgent's time
      never: true

Without --pricing, and for what the file leaves out (as the agent's
pricing: section): base 1, queued time at 2x base + 1 % per priority
point, capped at 10x. A default: given replaces that default whole.`,
		Example: `  lookahead forecast --snapshot examples/snapshot/snapshot.json --horizon 48h -o json
  lookahead forecast --snapshot snap.json --pricing examples/snapshot/pricing.yaml --predictions pred.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runForecast(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.snapshot, "snapshot", "", "snapshot JSON file; required")
	f.DurationVar(&o.horizon, "horizon", 48*time.Hour, "how far ahead to forecast")
	f.Int64Var(&o.now, "now", 0, "forecast from this Unix time (default: the snapshot's taken time)")
	f.StringVar(&o.policy, "policy", "easy", "fcfs, easy, conservative or depth=K")
	f.StringVar(&o.pricing, "pricing", "", "pricing file (YAML, or JSON by extension)")
	f.StringVar(&o.predictions, "predictions", "", "also write each local job's predicted start, end and nodes (JSON) to this file")
	cli.AddOutputFlag(cmd, &o.output)
	return cmd
}

func runForecast(_ context.Context, o forecastOptions, stdout, stderr io.Writer) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	if o.snapshot == "" {
		return cli.Usagef("--snapshot is required")
	}
	if o.horizon <= 0 || o.horizon > time.Duration(forecast.MaxDuration)*time.Second || o.horizon%time.Second != 0 {
		return cli.Usagef("--horizon %s: must be whole seconds in (0, %s]", durfmt.Duration(o.horizon), durfmt.Seconds(forecast.MaxDuration))
	}
	if o.now < 0 || o.now > forecast.MaxInstant {
		return cli.Usagef("--now %d: must lie in [0, %d]", o.now, forecast.MaxInstant)
	}
	policy, err := sim.ParsePolicy(o.policy)
	if err != nil {
		return cli.Usagef("--policy: %v", err)
	}
	snap, err := readSnapshot(o.snapshot)
	if err != nil {
		return err
	}
	pricing := forecast.DefaultPricing()
	if o.pricing != "" {
		if pricing, err = readPricing(o.pricing); err != nil {
			return err
		}
	}
	now := o.now
	if now == 0 {
		now = snap.Taken
	}
	horizon := now + int64(o.horizon/time.Second)
	if horizon > forecast.MaxInstant {
		return cli.Usagef("--horizon %s from %d ends past the model's last instant %d", durfmt.Duration(o.horizon), now, forecast.MaxInstant)
	}
	f, preds, err := sim.Build(*snap, now, horizon, policy, pricing)
	if err != nil {
		return err
	}
	for _, u := range f.Unmodelled {
		fmt.Fprintf(stderr, "warning: %s: %s\n", o.snapshot, u)
	}
	if o.predictions != "" {
		if err := writeJSONFile(o.predictions, preds); err != nil {
			return err
		}
	}
	if o.output == cli.FormatJSON {
		return cli.WriteJSON(stdout, f)
	}
	return forecastTable(stdout, f, preds)
}

func readSnapshot(path string) (*forecast.Snapshot, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open snapshot: %w", err)
	}
	defer fh.Close()
	s, err := forecast.DecodeSnapshot(fh)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return s, nil
}

// pricingFile is a pricing file as written: what it leaves out comes from
// forecast.DefaultPricing, as for the agent's pricing: section.
type pricingFile struct {
	Base    *float64             `json:"base" yaml:"base"`
	Default *forecast.Displace   `json:"default" yaml:"default"`
	Rules   []forecast.PriceRule `json:"rules" yaml:"rules"`
}

func (f pricingFile) pricing() forecast.Pricing {
	p := forecast.DefaultPricing()
	if f.Base != nil {
		p.Base = *f.Base
	}
	if f.Default != nil {
		p.Default = *f.Default
	}
	p.Rules = f.Rules
	return p
}

// readPricing reads a pricing file: JSON by extension, YAML otherwise;
// unknown keys are errors, and so is a syntax error (with its line).
func readPricing(path string) (forecast.Pricing, error) {
	var f pricingFile
	b, err := config.ReadFile(path)
	if err != nil {
		return forecast.Pricing{}, fmt.Errorf("pricing file: %w", err)
	}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		if err = forecast.DecodeStrictJSON(strings.NewReader(string(b)), &f); err != nil {
			err = cli.UsageError{Err: fmt.Errorf("pricing file %s: %w", path, err)}
		}
	} else {
		err = decodeYAMLFile("pricing file", path, b, &f, "see examples/snapshot/pricing.yaml and `lookahead forecast --help`")
	}
	if err != nil {
		return forecast.Pricing{}, err
	}
	p := f.pricing()
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("pricing file %s: %w", path, err)
	}
	return p, nil
}

func writeJSONFile(path string, v any) (err error) {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if cerr := fh.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write %s: %w", path, cerr)
		}
	}()
	return cli.WriteJSON(fh, v)
}

// forecastTable prints, per node, the offered CPU-hours by price, then the
// predictions.
func forecastTable(w io.Writer, f forecast.Forecast, preds []forecast.Prediction) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "site %s, from %d to %d (%s), %d nodes, %d slots\n\n", f.Site, f.Generated, f.Horizon,
		time.Duration(f.Horizon-f.Generated)*time.Second, len(f.Nodes), len(f.Slots))
	fmt.Fprintln(tw, "NODE\tPRICE\tCPU-HOURS\tSLOTS\tFIRST")
	type key struct {
		node  string
		price float64
	}
	agg := map[key][3]float64{}
	var keys []key
	for _, s := range f.Slots {
		k := key{s.Node, s.Price}
		a, seen := agg[k]
		if !seen {
			keys = append(keys, k)
			a[2] = float64(s.Start)
		}
		a[0] += float64(s.Procs) * float64(s.End-s.Start) / 3600
		a[1]++
		agg[k] = a
	}
	for _, k := range keys {
		a := agg[k]
		fmt.Fprintf(tw, "%s\t%.2f\t%.1f\t%.0f\t%d\n", k.node, k.price, a[0], a[1], int64(a[2]))
	}
	fmt.Fprintln(tw, "\nJOB\tSTART\tEND\tHOSTS")
	sort.SliceStable(preds, func(a, b int) bool { return preds[a].Start < preds[b].Start })
	for _, p := range preds {
		var hs []string
		for _, h := range p.Hosts {
			hs = append(hs, fmt.Sprintf("%s:%d", h.Node, h.Procs))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", p.Job, p.Start, p.End, strings.Join(hs, ","))
	}
	return tw.Flush()
}

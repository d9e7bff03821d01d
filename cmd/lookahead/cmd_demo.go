package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"lookahead/demo"
	"lookahead/internal/cli"
)

type demoOptions struct {
	duration time.Duration
	speed    float64
	jobs     int
	seed     uint64
	color    string
	logFile  string
	output   string
	web      string
}

func newDemoCommand() *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run lookahead end to end in one process: NATS, 4 simulated sites (one Slurm-kind), their agents, the broker",
		Long: `Run the whole of lookahead on this machine with nothing installed but Go: an
embedded NATS server with JetStream; four simulated sites of different
sizes, speeds and prices whose local workloads are slices of real traces
from the Parallel Workloads Archive (bundled) — three Torque/Maui-kind and
one Slurm-kind (delta: the agent's Slurm adapter over a simulated Slurm
cluster); one agent per site forecasting with the built-in simulator; and
the broker planning with the co-allocation core. The summary counts the
jobs that span both kinds. A stream of grid jobs is submitted through the broker's
NATS endpoint, some wider than any one site. You see forecasts arrive,
plans, reservations made (on several sites at once) and released, and jobs
start and finish; at the end the broker audits every site and prints a
summary.

Time runs accelerated (--speed simulated seconds per real second); the demo
stops by itself after --duration. Ctrl-C stops it cleanly and still prints
the summary.`,
		Example: `  lookahead demo
  lookahead demo --duration 2m --speed 300 --jobs 40
  lookahead demo -o json > summary.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.duration, "duration", 60*time.Second, "how long the demo runs (real time)")
	f.Float64Var(&o.speed, "speed", 600, "simulated seconds per real second")
	f.IntVar(&o.jobs, "jobs", 24, "grid jobs to submit")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the grid job stream")
	f.StringVar(&o.color, "color", "auto", "colour the live output: auto, always, never")
	f.StringVar(&o.logFile, "log", "", "write the components' JSON logs to this file")
	f.StringVar(&o.web, "web", "127.0.0.1:0", `the web view's loopback address (port 0: a free one; "off": none)`)
	cli.AddOutputFlag(cmd, &o.output)
	return cmd
}

func runDemo(ctx context.Context, w io.Writer, o *demoOptions) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	if o.seed == 0 {
		return cli.Usagef("--seed 0: must be at least 1 (0 would be the default seed, 1, again)")
	}
	opts := demo.Options{Duration: o.duration, Speed: o.speed, Jobs: o.jobs, Seed: o.seed, Out: w, Web: o.web}
	switch o.color {
	case "always":
		opts.Color = true
	case "auto":
		opts.Color = cli.IsTerminal(w) && os.Getenv("NO_COLOR") == ""
	case "never":
	default:
		return cli.Usagef("--color %q: must be auto, always or never", o.color)
	}
	if o.output == cli.FormatJSON {
		opts.Out, opts.Color = os.Stderr, false // live output aside, only the summary on stdout
	}
	if err := opts.Validate(); err != nil {
		return cli.UsageError{Err: err}
	}
	if o.logFile != "" {
		f, err := os.Create(o.logFile)
		if err != nil {
			return cli.Usagef("--log: %w", err)
		}
		defer f.Close()
		opts.Log = f
	}
	sum, err := demo.Run(ctx, opts)
	if o.output == cli.FormatJSON && (err == nil || ctx.Err() != nil) {
		if werr := cli.WriteJSON(w, sum); werr != nil {
			return werr
		}
	}
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

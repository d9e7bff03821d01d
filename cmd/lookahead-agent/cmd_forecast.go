package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/internal/cli"
)

type forecastOptions struct {
	*globalOptions
	once     bool
	snapshot string
	output   string
}

func newForecastCommand(g *globalOptions) *cobra.Command {
	opts := &forecastOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "forecast --once",
		Short: "Build one forecast now and print it (no NATS)",
		Long: `Build one forecast of this site now, exactly as the daemon would (snapshot from
qstat/pbsnodes on a Torque site, sinfo/squeue/scontrol on a Slurm site; the
configured engine and pricing), and print it: a summary
per node, then every local job waiting in the queue with its predicted
start; or the v1 forecast JSON with -o json (` + "`lookahead-agent status`" + ` lists the
running agent's predicted starts, -o json too). Nothing is published, NATS
is not contacted: use it to check a setup before starting the daemon.

--snapshot FILE forecasts a snapshot JSON file instead of asking the
scheduler.`,
		Example: `  lookahead-agent forecast --once -o json > forecast.json
  lookahead-agent forecast --once --snapshot snap.json --site alpha`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runForecast(cmd.Context(), cmd, opts, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&opts.once, "once", false, "build one forecast and exit (required)")
	cmd.Flags().StringVar(&opts.snapshot, "snapshot", "", "forecast this snapshot JSON file instead of asking the scheduler")
	cmd.Flags().String("horizon", "", "how far ahead to forecast, e.g. 48h (config key horizon)")
	cli.AddOutputFlag(cmd, &opts.output)
	return cmd
}

func runForecast(ctx context.Context, cmd *cobra.Command, opts *forecastOptions, w io.Writer) error {
	if !opts.once {
		return cli.Usagef("forecast: --once is required (the daemon is `lookahead-agent run`)")
	}
	if err := cli.CheckFormat(opts.output); err != nil {
		return err
	}
	c, err := opts.load(cmd)
	if err != nil {
		return err
	}
	ac, _ := c.agentConfig()
	a, err := agent.New(ac, agent.Deps{Snapshotter: snapshotter(c, opts.snapshot), Engine: engine(c)})
	if err != nil {
		return err
	}
	f, err := a.BuildOnce(ctx)
	if err != nil {
		return err
	}
	if opts.output == cli.FormatJSON {
		return cli.WriteJSON(w, f)
	}
	if err := printForecast(w, f); err != nil {
		return err
	}
	st := a.Status()
	return printQueue(w, st.Queue, st.QueueTotal, f.Generated)
}

// printForecast is the table view: per node, its slots' processor-hours
// and the cheapest price.
func printForecast(w io.Writer, f *forecast.Forecast) error {
	fmt.Fprintf(w, "site %s  generated %s  horizon %s  nodes %d  slots %d\n\n",
		f.Site, unixUTC(f.Generated), unixUTC(f.Horizon), len(f.Nodes), len(f.Slots))
	type row struct {
		slots    int
		cpuHours float64
		minPrice float64
	}
	rows := map[string]*row{}
	for _, s := range f.Slots {
		r := rows[s.Node]
		if r == nil {
			r = &row{minPrice: s.Price}
			rows[s.Node] = r
		}
		r.slots++
		r.cpuHours += float64(s.Procs) * float64(s.End-s.Start) / 3600
		r.minPrice = min(r.minPrice, s.Price)
	}
	names := make([]string, 0, len(f.Nodes))
	for _, n := range f.Nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSLOTS\tCPU-HOURS\tMIN PRICE")
	for _, n := range names {
		r := rows[n]
		if r == nil {
			r = &row{}
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\n", n, r.slots, r.cpuHours, r.minPrice)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printSlots(w, f.Slots)
}

// maxSlotRows bounds the slot listing of the table view; -o json has all.
const maxSlotRows = 40

// printSlots lists the slots by node and start, each with its times.
func printSlots(w io.Writer, slots []forecast.Slot) error {
	sorted := slices.Clone(slots)
	slices.SortStableFunc(sorted, func(a, b forecast.Slot) int {
		return cmp.Or(strings.Compare(a.Node, b.Node), cmp.Compare(a.Start, b.Start))
	})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nNODE\tPROCS\tSTART\tEND\tPRICE")
	for i, s := range sorted {
		if i == maxSlotRows {
			fmt.Fprintf(tw, "… %d more slots (-o json lists every one)\n", len(sorted)-i)
			break
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2f\n", s.Node, s.Procs, unixUTC(s.Start), unixUTC(s.End), s.Price)
	}
	return tw.Flush()
}

// unixUTC shows Unix seconds as a UTC time.
func unixUTC(sec int64) string {
	return time.Unix(sec, 0).UTC().Format("2006-01-02 15:04:05Z")
}

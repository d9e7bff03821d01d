package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lookahead/broker/client"
	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/internal/cli"
	"lookahead/internal/durfmt"
	"lookahead/wire"
)

type planOptions struct {
	forecasts       []string
	jobs            string
	output          string
	notBefore       int64
	multiSiteFactor float64
	stagingDelay    time.Duration
	tiers           []float64
	criterion       string
	tolerance       float64
	freeTolerance   float64
	splitBacklog    float64
	freeWindow      string
	order           string
	aging           time.Duration
	conn            client.Conn
	warn            io.Writer // warnings (slots outside a forecast's window); nil: none
}

func newPlanCommand() *cobra.Command {
	var opts planOptions
	cmd := &cobra.Command{
		Use:   "plan [--forecast FILE ... --jobs FILE]",
		Short: "Show the broker's last plan, or plan a grid queue offline on recorded forecasts (what-if)",
		Long: `Without --forecast and --jobs, plan asks the running broker for its last
planning cycle's plan: every waiting job's allocation (sites, nodes, start,
cost) or why it does not fit yet, the sites planned on and the stale ones.
-o json prints the broker's plan object (cycle, time, sites, stale,
allocations, commit).

Offline (what-if), plan reads v1 site forecasts and a JSON array of v1 grid job requests,
plans the jobs in the queue order of --order (fcfs, the broker's default:
submitted, then id; price: max_price descending, then submitted, then
id; or aging: submitted moved earlier by --aging per credit of max_price,
then submitted, then id), each on what the jobs before it left, with the broker's co-allocation
algorithm, and prints one allocation per job in the queue's order.

A job that does not fit within the forecasts' horizon gets an "error" that
starts with "no-fit:" (or "invalid:" for a bad request); that is an answer,
and plan still exits 0. Invalid forecast or queue files exit 2 with the file
and the offending field named.

A job that omits "criterion" is planned by --criterion (default free-first:
least-held over free time first). least-held: among the allocations
finishing at most --tolerance × its walltime after the earliest possible
finish, the one holding the fewest processor-seconds, then the earliest,
then on the fewest sites, then the cheapest. free-first: the same among the
allocations on free time alone (each site's slots at its forecast's
free_price, else at the lowest price in the forecasts) when one
finishes at most --free-tolerance × its walltime after the earliest
possible finish (with --free-window since-submit, less the time the job
has waited since it was submitted), else among all. The WHY column (and "why" in JSON) says
why each allocation won.

-o json prints a JSON array of v1 allocations and nothing else on stdout.
Use "-" as --jobs to read the queue from stdin.`,
		Example: `  lookahead plan --forecast examples/plan/alpha.json --forecast examples/plan/beta.json \
      --jobs examples/plan/queue.json
  lookahead plan --forecast a.json --jobs queue.json -o json --multi-site-factor 1.2 --staging-delay 10m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.warn = cmd.ErrOrStderr()
			return runPlan(cmd.Context(), opts, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.forecasts, "forecast", nil, "a site's v1 forecast `file` (repeat for more sites)")
	f.StringVar(&opts.jobs, "jobs", "", `JSON array of v1 job requests ("-" for stdin)`)
	f.Int64Var(&opts.notBefore, "not-before", 0, "no allocation starts before this Unix time (default: no bound)")
	f.Float64Var(&opts.multiSiteFactor, "multi-site-factor", 0, "runtime multiplier for jobs spanning sites (0 or 1: none)")
	f.DurationVar(&opts.stagingDelay, "staging-delay", 0, "hold time added per remote site for jobs spanning sites")
	f.Float64SliceVar(&opts.tiers, "tiers", nil, "coarse speed tiers, comma-separated `speeds`, e.g. 2,1 (default: exact, one tier per node speed)")
	f.Lookup("tiers").DefValue = "" // not "[]"
	f.StringVar(&opts.criterion, "criterion", forecast.DefaultCriterion,
		"criterion of jobs that omit one: "+strings.Join(forecast.Criteria(), ", "))
	f.Float64Var(&opts.tolerance, "tolerance", coalloc.DefaultTolerance,
		"least-held: how much later than the earliest finish an allocation may end, as a fraction of the job's walltime")
	f.Float64Var(&opts.freeTolerance, "free-tolerance", coalloc.DefaultFreeTolerance,
		"free-first: how much later than the earliest finish an allocation on free time alone may end, as a fraction of the job's walltime")
	f.Float64Var(&opts.splitBacklog, "split-backlog", 0,
		"a job spans sites only when the time it saves exceeds this × the multi-site factor's waste (factor − 1, plus staging per walltime) × the grid's backlog (queued work over its processors; planning.split_backlog; 0: off, the default; docs/coalloc.md, \"The split window\")")
	f.StringVar(&opts.freeWindow, "free-window", coalloc.FreeWindowEachCycle,
		"free-first: what --free-tolerance counts from: each-cycle (each plan's earliest finish) or since-submit (the time since the job's submitted is spent from it, so it waits for free time at most --free-tolerance × walltime in all)")
	f.StringVar(&opts.order, "order", coalloc.DefaultOrder,
		"queue order: fcfs (submitted, then id; the broker's default planning.order), price (max_price descending, then submitted, then id) or aging (see --aging)")
	f.DurationVar(&opts.aging, "aging", 0,
		"--order aging's rate (planning.aging): the wait one credit per CPU-hour of max_price is worth, e.g. 2h")
	opts.conn.Bind(f)
	cli.AddOutputFlag(cmd, &opts.output)
	return cmd
}

func runPlan(ctx context.Context, opts planOptions, stdin io.Reader, stdout io.Writer) error {
	if err := cli.CheckFormat(opts.output); err != nil {
		return err
	}
	if len(opts.forecasts) == 0 && opts.jobs == "" {
		return runPlanOnline(ctx, opts, stdout)
	}
	if len(opts.forecasts) == 0 {
		return cli.Usagef("plan: at least one --forecast is required")
	}
	if opts.jobs == "" {
		return cli.Usagef("plan: --jobs is required")
	}
	if opts.stagingDelay < 0 || opts.stagingDelay%time.Second != 0 || opts.stagingDelay > time.Duration(forecast.MaxDuration)*time.Second {
		return cli.Usagef("plan: --staging-delay %s: must be whole seconds in [0, %s]", durfmt.Duration(opts.stagingDelay), durfmt.Seconds(forecast.MaxDuration))
	}
	if opts.notBefore < 0 || opts.notBefore > forecast.MaxInstant {
		return cli.Usagef("plan: --not-before %d: must lie in [0, %d]", opts.notBefore, forecast.MaxInstant)
	}
	copts := coalloc.Options{
		Tiers: opts.tiers, MultiSiteFactor: opts.multiSiteFactor, StagingDelay: int64(opts.stagingDelay / time.Second),
		NotBefore: opts.notBefore, Criterion: opts.criterion, Tolerance: opts.tolerance, FreeTolerance: opts.freeTolerance, FreeWindow: opts.freeWindow,
		Order: opts.order, Aging: opts.aging.Seconds(), SplitBacklog: opts.splitBacklog,
	}
	if err := client.CheckOrder("--order", opts.order, "--aging", opts.aging); err != nil {
		return cli.Usagef("plan: %w", err)
	}
	if err := copts.Validate(); err != nil {
		return cli.Usagef("plan: %w", err)
	}
	fcs, err := readForecasts(opts.forecasts, opts.warn)
	if err != nil {
		return err
	}
	jobs, err := readJobs(opts.jobs, stdin)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	allocs, err := coalloc.PlanQueue(fcs, jobs, copts)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	for i, a := range allocs {
		if a.Error == coalloc.NoFitCapacity || a.Error == coalloc.NoFitRequirements {
			allocs[i].Why = coalloc.Explain(fcs, jobs[i], copts) // what was short, what would help
		}
	}
	if opts.output == cli.FormatJSON {
		return cli.WriteJSON(stdout, allocs)
	}
	return writePlanTable(stdout, allocs)
}

// readForecasts reads the forecast files, checks each against the
// planner's limits and the others (one file per site), naming the file of
// any error, and clips slots outside each forecast's window (a warning
// says how many, docs/formats.md).
func readForecasts(paths []string, warn io.Writer) ([]forecast.Forecast, error) {
	out := make([]forecast.Forecast, 0, len(paths))
	sites := map[string]string{}
	for _, path := range paths {
		fc, err := readForecast(path)
		if err != nil {
			return nil, err
		}
		if other, dup := sites[fc.Site]; dup {
			return nil, cli.Usagef("forecast %s: site %q duplicates forecast %s", path, fc.Site, other)
		}
		sites[fc.Site] = path
		clipped, n := forecast.ClipToWindow(*fc)
		if n.Changed() && warn != nil {
			fmt.Fprintf(warn, "warning: forecast %s: %d slots clipped to its window [generated %d, horizon %d], %d wholly outside it dropped\n",
				path, n.Clipped, fc.Generated, fc.Horizon, n.Dropped)
		}
		out = append(out, clipped)
	}
	return out, nil
}

func readForecast(path string) (*forecast.Forecast, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cli.Usagef("forecast: %w", err)
	}
	defer f.Close()
	fc, err := forecast.DecodeForecast(f)
	if err == nil {
		err = coalloc.ValidateForecast(fc)
	}
	if err != nil {
		return nil, fmt.Errorf("forecast %s: %w", path, err)
	}
	return fc, nil
}

func readJobs(path string, stdin io.Reader) ([]forecast.JobRequest, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, cli.Usagef("jobs: %w", err)
		}
		defer f.Close()
		r = f
	}
	jobs, err := forecast.DecodeJobs(r)
	if err != nil {
		return nil, fmt.Errorf("jobs %s: %w", path, err)
	}
	return jobs, nil
}

func writePlanTable(w io.Writer, allocs []forecast.Allocation) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTART (UTC)\tEND (UTC)\tPROCS\tSITES\tCOST\tPARTS / ERROR\tWHY")
	placed := 0
	for _, a := range allocs {
		if !a.Placed() {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t%s\t%s\n", a.Job, a.Error, a.Why)
			continue
		}
		placed++
		procs := 0
		parts := make([]string, len(a.Parts))
		for i, p := range a.Parts {
			procs += p.Procs
			parts[i] = fmt.Sprintf("%s/%s:%d", p.Site, p.Node, p.Procs)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%.2f\t%s\t%s\n", a.Job, utc(a.Start), utc(a.End), procs,
			strings.Join(a.Sites(), ","), a.Cost, strings.Join(parts, " "), a.Why)
	}
	fmt.Fprintf(tw, "\n%d of %d jobs placed\n", placed, len(allocs))
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

func utc(t int64) string { return time.Unix(t, 0).UTC().Format("2006-01-02 15:04:05") }

// runPlanOnline prints the broker's last plan.
func runPlanOnline(ctx context.Context, opts planOptions, stdout io.Writer) error {
	p, err := ask(ctx, &opts.conn, func(ctx context.Context, c *client.Client) (wire.Plan, error) { return c.Plan(ctx) })
	if err != nil {
		return err
	}
	if opts.output == cli.FormatJSON {
		return cli.WriteJSON(stdout, p)
	}
	if p.Cycle == 0 {
		_, err := fmt.Fprintln(stdout, "the broker has not planned yet")
		return err
	}
	fmt.Fprintf(stdout, "cycle %d at %s over %s (%.1f ms)", p.Cycle, utc(p.Time), strings.Join(p.Sites, ", "), float64(p.Micros)/1000)
	if len(p.Stale) > 0 {
		fmt.Fprintf(stdout, "; stale, not planned on: %s", strings.Join(p.Stale, ", "))
	}
	fmt.Fprintln(stdout)
	if len(p.Commit) > 0 {
		fmt.Fprintf(stdout, "reserving now: %s\n", strings.Join(p.Commit, ", "))
	}
	fmt.Fprintln(stdout)
	return writePlanTable(stdout, p.Allocations)
}

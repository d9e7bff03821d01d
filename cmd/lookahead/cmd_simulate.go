package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/forecast/swf"
	"lookahead/internal/cli"
	"lookahead/slurm"
)

type simulateOptions struct {
	trace    string
	procs    int
	nodes    int
	ppn      int
	policy   string
	limit    int
	schedule string
	output   string
	progress string
	poll     int64
	mauiCfg  string
	slurmCfg string
	clock    clockFlags
}

func newSimulateCommand() *cobra.Command {
	var o simulateOptions
	cmd := &cobra.Command{
		Use:   "simulate --trace FILE.swf[.gz] [--procs N | --nodes N --ppn K] [--policy easy]",
		Short: "Replay an SWF workload trace through the built-in scheduler simulator",
		Long: `simulate replays a workload in the Standard Workload Format (Parallel
Workloads Archive; plain or gzipped) through lookahead's built-in
event-driven simulator with Maui's policy and prints the metrics: AWRT and
AWWT (response and wait weighted by processors x run time), mean wait, mean
bounded slowdown (tau = 10 s), utilization, makespan, rejected jobs.

The cluster is --procs single-processor nodes (default: the trace header's
MaxProcs) or --nodes N with --ppn K processors each. A job asks for its
requested processors (the allocated ones when the request is -1) and its
requested time as walltime (the run time when -1), and runs min(run time,
walltime). Jobs wider than the cluster are rejected and counted. Records
whose processors or run time are missing (-1) are skipped with a warning;
malformed lines stop the replay with the line number.

Policies: fcfs, easy (Maui RESERVATIONDEPTH 1), conservative, depth=K.
With --maui-config the policy is a site's own maui.cfg instead: its
RESERVATIONDEPTH, RESERVATIONPOLICY, BACKFILLPOLICY, NODEALLOCATIONPOLICY,
JOBNODEMATCHPOLICY and priority function (weights, caps and the
USERCFG/GROUPCFG/ACCOUNTCFG/CLASSCFG/QOSCFG priorities; an SWF job's user,
group and queue numbers are its credential names). What the simulator cannot
model is printed once on stderr (and listed under "unmodelled" with -o json).
With --slurm-config the policy is a Slurm cluster's slurm.conf, as a Slurm
site's agent reads it (docs/slurm.md): backfill to bf_max_job_test, or
sched/builtin's strict order; jobs in submit order (an SWF trace has no
Slurm priorities); what it cannot model is said the same way.

The replay runs on the trace's own wall clock: its time 0 is the header's
UnixStartTime and the site's zone its TimeZoneString (UTC when absent), so
that fairshare intervals and standing reservations' windows fall where the
site's Maui put them; --start and --timezone override them. Start and end
times in --schedule are Unix times on that clock.`,
		Example: `  lookahead simulate --trace CTC-SP2-1996-3.1-cln.swf.gz --policy easy
  lookahead simulate --trace KTH-SP2-1996-2.1-cln.swf.gz --procs 100 --policy conservative -o json
  lookahead simulate --trace t.swf --nodes 64 --ppn 8 --jobs 1000 --schedule sched.jsonl
  lookahead simulate --trace t.swf --nodes 32 --ppn 4 --maui-config /usr/local/maui/maui.cfg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n := btoi(o.mauiCfg != "") + btoi(o.slurmCfg != "") + btoi(cmd.Flags().Changed("policy")); n > 1 {
				return cli.Usagef("--policy, --maui-config and --slurm-config exclude each other")
			}
			return runSimulate(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.trace, "trace", "", "SWF trace file (.swf or .swf.gz); required")
	f.IntVar(&o.procs, "procs", 0, "cluster of N single-processor nodes (default: the trace's MaxProcs)")
	f.IntVar(&o.nodes, "nodes", 0, "cluster of N nodes (with --ppn)")
	f.IntVar(&o.ppn, "ppn", 0, "processors per node (with --nodes)")
	f.StringVar(&o.policy, "policy", "easy", "fcfs, easy, conservative or depth=K")
	f.StringVar(&o.mauiCfg, "maui-config", "", "schedule with this maui.cfg's policy (instead of --policy)")
	f.StringVar(&o.slurmCfg, "slurm-config", "", "schedule with this slurm.conf's policy (instead of --policy)")
	f.IntVar(&o.limit, "jobs", 0, "replay only the first N jobs (0: all)")
	f.StringVar(&o.schedule, "schedule", "", "write every job's start and end as JSON lines to this file")
	o.clock.add(f, "the trace's time 0")
	f.Int64Var(&o.poll, "poll", 0, "scheduler iteration in seconds, like Maui's RMPOLLINTERVAL (0: act at every event)")
	cli.AddProgressFlag(cmd, &o.progress)
	cli.AddOutputFlag(cmd, &o.output)
	return cmd
}

func runSimulate(ctx context.Context, o simulateOptions, stdout, stderr io.Writer) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	if o.trace == "" {
		return cli.Usagef("--trace is required")
	}
	if o.limit < 0 {
		return cli.Usagef("--jobs %d: must be >= 0 (0: every job of the trace)", o.limit)
	}
	bar, err := cli.Progress(o.progress, stderr, "jobs")
	if err != nil {
		return err
	}
	policy, name, unmodelled, err := simulatePolicy(o)
	if err != nil {
		return err
	}
	for _, u := range unmodelled {
		fmt.Fprintf(stderr, "warning: not modelled: %s\n", u)
	}
	if o.poll < 0 || o.poll > forecast.MaxDuration {
		return cli.Usagef("--poll %d: must lie in [0, %d] seconds", o.poll, forecast.MaxDuration)
	}
	policy.Poll = o.poll
	tr, err := readSWF(o.trace, o.limit)
	if err != nil {
		return err
	}
	warnSkipped(stderr, o.trace, len(tr.Jobs)+len(tr.Skipped), tr.Skipped)
	cluster, desc, err := simCluster(o, tr.Header)
	if err != nil {
		return err
	}
	clock, err := traceClock(o.trace, tr.Header, o.clock)
	if err != nil {
		return err
	}
	if clock.guessed && policy.FollowsWallClock() {
		fmt.Fprintf(stderr, "warning: %s has no UnixStartTime header: its time 0 is taken as 1970-01-01 00:00 UTC, so fairshare intervals and standing reservations fall where they may not have (give --start)\n", o.trace)
	}
	policy = clock.Site(policy)
	jobs := tr.SimJobs()
	clock.Jobs(jobs)
	opts := sim.Options{KeepHosts: false}
	if bar != nil {
		opts.Progress = bar
	}
	start := time.Now()
	res, err := sim.RunContext(ctx, cluster, jobs, policy, opts)
	if opts.Progress != nil {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return fmt.Errorf("simulate %s: %w", o.trace, err)
	}
	elapsed := time.Since(start)
	if o.schedule != "" {
		if err := writeSchedule(o.schedule, res.Jobs); err != nil {
			return err
		}
	}
	out := simulateReport{Trace: o.trace, Policy: name, Cluster: desc, Procs: cluster.Capacity(),
		Skipped: len(tr.Skipped), Stuck: len(res.Stuck), Metrics: res.Metrics, Seconds: elapsed.Seconds(),
		Unmodelled: unmodelled}
	if o.output == cli.FormatJSON {
		return cli.WriteJSON(stdout, out)
	}
	return out.table(stdout)
}

type simulateReport struct {
	Trace   string      `json:"trace"`
	Policy  string      `json:"policy"`
	Cluster string      `json:"cluster"`
	Procs   int         `json:"procs"`
	Skipped int         `json:"skipped"`
	Stuck   int         `json:"stuck,omitempty"`
	Metrics sim.Metrics `json:"metrics"`
	Seconds float64     `json:"seconds"`
	// Unmodelled: the --maui-config settings the simulator cannot follow.
	Unmodelled []string `json:"unmodelled,omitempty"`
}

// simulatePolicy is --policy, or --maui-config's policy with what of it
// cannot be modelled, and the policy's name for the report.
func simulatePolicy(o simulateOptions) (sim.Policy, string, []string, error) {
	if o.slurmCfg != "" {
		return slurmPolicy(o.slurmCfg)
	}
	if o.mauiCfg == "" {
		p, err := sim.ParsePolicy(o.policy)
		if err != nil {
			return p, "", nil, cli.Usagef("--policy: %v", err)
		}
		return p, p.String(), nil, nil
	}
	f, err := os.Open(o.mauiCfg)
	if err != nil {
		return sim.Policy{}, "", nil, cli.UsageError{Err: fmt.Errorf("--maui-config: %w", err)}
	}
	defer f.Close()
	mc, err := sim.ReadMauiConfig(f)
	if err != nil {
		return sim.Policy{}, "", nil, cli.UsageError{Err: fmt.Errorf("--maui-config %s: %w", o.mauiCfg, err)}
	}
	return mc.Policy, "maui.cfg " + o.mauiCfg, mc.Unmodelled, nil
}

func (r simulateReport) table(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	m := r.Metrics
	rows := [][2]string{
		{"trace", r.Trace}, {"policy", r.Policy}, {"cluster", r.Cluster},
		{"jobs run", fmt.Sprint(m.Jobs)}, {"jobs rejected", fmt.Sprint(m.Rejected)},
		{"records skipped", fmt.Sprint(r.Skipped)},
		{"AWRT", fmt.Sprintf("%.0f s", m.AWRT)}, {"AWWT", fmt.Sprintf("%.0f s", m.AWWT)},
		{"mean wait", fmt.Sprintf("%.0f s", m.MeanWait)}, {"mean bounded slowdown", fmt.Sprintf("%.2f", m.MeanBSLD)},
		{"utilization", fmt.Sprintf("%.3f", m.Utilization)}, {"makespan", fmt.Sprintf("%d s", m.Makespan)},
		{"replay time", fmt.Sprintf("%.2f s (%.0f jobs/s)", r.Seconds, float64(m.Jobs+m.Rejected)/max(r.Seconds, 1e-9))},
	}
	if r.Stuck > 0 {
		rows = append(rows, [2]string{"never started", fmt.Sprint(r.Stuck)})
	}
	if m.Short > 0 {
		rows = append(rows, [2]string{"started short of their processors", fmt.Sprint(m.Short)})
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	return tw.Flush()
}

// simCluster is the replay's cluster: --nodes x --ppn, --procs
// single-processor nodes or the trace's MaxProcs, within the model's
// limits (forecast.MaxClusterNodes nodes, forecast.MaxProcs per node).
func simCluster(o simulateOptions, h swf.Header) (sim.Cluster, string, error) {
	switch {
	case o.nodes > 0 || o.ppn > 0:
		if o.nodes <= 0 || o.ppn <= 0 || o.procs > 0 {
			return sim.Cluster{}, "", cli.Usagef("--nodes and --ppn go together (both > 0) and exclude --procs")
		}
		if o.nodes > forecast.MaxClusterNodes || o.ppn > forecast.MaxProcs {
			return sim.Cluster{}, "", cli.Usagef("--nodes %d --ppn %d: at most %d nodes of %d processors", o.nodes, o.ppn, forecast.MaxClusterNodes, forecast.MaxProcs)
		}
		return sim.UniformCluster(o.nodes, o.ppn), fmt.Sprintf("%d nodes x %d procs", o.nodes, o.ppn), nil
	case o.procs < 0 || o.procs > forecast.MaxClusterNodes:
		return sim.Cluster{}, "", cli.Usagef("--procs %d: must lie in [1, %d] (or give --nodes and --ppn)", o.procs, forecast.MaxClusterNodes)
	case o.procs > 0:
		return sim.PoolCluster(o.procs), fmt.Sprintf("%d procs", o.procs), nil
	case h.MaxProcs > forecast.MaxClusterNodes:
		return sim.Cluster{}, "", cli.Usagef("the trace's MaxProcs %d: more than %d single-processor nodes; give --nodes and --ppn", h.MaxProcs, forecast.MaxClusterNodes)
	case h.MaxProcs > 0:
		return sim.PoolCluster(h.MaxProcs), fmt.Sprintf("%d procs (trace MaxProcs)", h.MaxProcs), nil
	}
	return sim.Cluster{}, "", cli.Usagef("the trace has no MaxProcs header: give --procs or --nodes/--ppn")
}

// guessedClock is a trace's clock and whether its origin was guessed.
type guessedClock struct {
	sim.Clock
	guessed bool
}

// traceClock is the trace's wall clock by the one rule (sim.TraceClock):
// the flags, else the header.
func traceClock(path string, h swf.Header, flags clockFlags) (guessedClock, error) {
	over, err := flags.setting()
	if err != nil {
		return guessedClock{}, err
	}
	hdr, err := h.Clock(time.LoadLocation)
	if err != nil {
		return guessedClock{}, cli.UsageError{Err: fmt.Errorf("trace %s: %w", path, err)}
	}
	c, guessed := sim.TraceClock(over, hdr)
	return guessedClock{c, guessed}, nil
}

// readSWF opens an SWF file, gunzipping it when it is gzipped.
func readSWF(path string, limit int) (*swf.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	defer f.Close()
	in, _, err := swf.Unzipped(f)
	if err != nil {
		return nil, cli.UsageError{Err: fmt.Errorf("trace %s: %w", path, err)}
	}
	tr, err := swf.ReadLenient(in, limit) // a malformed line is left out and said, not the trace
	if err != nil {
		return nil, cli.UsageError{Err: fmt.Errorf("trace %s: %w", path, err)}
	}
	if err := noRecords(path, len(tr.Jobs)+len(tr.Skipped)); err != nil {
		return nil, err
	}
	if err := swf.NoUsableJob(len(tr.Jobs), tr.Skipped); err != nil {
		return nil, cli.UsageError{Err: fmt.Errorf("trace %s: %w", path, err)}
	}
	return tr, nil
}

// noRecords refuses a trace without a single job record: an empty file
// (a failed download) would otherwise replay nothing and report zeros.
func noRecords(path string, records int) error {
	if records > 0 {
		return nil
	}
	size := "?"
	if st, err := os.Stat(path); err == nil {
		size = fmt.Sprint(st.Size())
	}
	return cli.Usagef("trace %s: no job records (%s bytes): an empty or cut file, or not an SWF trace", path, size)
}

// warnSkipped says how many of the trace's records were left out and why.
func warnSkipped(w io.Writer, path string, records int, skipped []swf.Skip) {
	if len(skipped) > 0 {
		fmt.Fprintf(w, "warning: %s: %s\n", path, swf.LeftOut(records, skipped))
	}
}

func writeSchedule(path string, jobs []sim.JobResult) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("schedule file: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("schedule file: %w", cerr)
		}
	}()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, j := range jobs {
		if err := enc.Encode(j); err != nil {
			return fmt.Errorf("schedule file: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("schedule file: %w", err)
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// slurmPolicy is a slurm.conf's policy and what of it cannot be modelled.
func slurmPolicy(path string) (sim.Policy, string, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return sim.Policy{}, "", nil, cli.UsageError{Err: fmt.Errorf("--slurm-config: %w", err)}
	}
	defer f.Close()
	c, err := slurm.ReadConf(f)
	if err == nil {
		var p sim.Policy
		var notes []string
		if p, notes, err = c.Policy(); err == nil {
			return p, "slurm.conf " + path, notes, nil
		}
	}
	return sim.Policy{}, "", nil, cli.UsageError{Err: fmt.Errorf("--slurm-config %s: %w", path, err)}
}

package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/internal/cli"
	"lookahead/internal/durfmt"
	"lookahead/wire"
)

type submitOptions struct {
	conn      client.Conn
	output    string
	job       forecast.JobRequest
	walltime  time.Duration
	deadline  time.Duration
	requestID string
	script    string
}

func newSubmitCommand() *cobra.Command {
	o := &submitOptions{}
	cmd := &cobra.Command{
		Use:   "submit [JOB.json|-]",
		Short: "Submit a grid job to the broker and print its id",
		Long: `Submit a grid job. Give a v1 job request file (or - for stdin), or describe the
job with flags; flags set on the command line override the file's fields.
The broker validates the job, checks your identity and budget (the job's
worst case, max_price × procs × walltime, must fit in what is left) and
answers with the job id. A retry after a timeout reuses the request id, so
it never creates a second job.

With --script FILE the broker runs the job: once it is reserved, each
site's agent submits the script into the job's reservation there (as your
mapped local user), and the broker follows the parts to their end (see
'lookahead status ID'). The script (at most 256 KiB) gets LOOKAHEAD_JOB,
LOOKAHEAD_SITE, LOOKAHEAD_PART (the part's index), LOOKAHEAD_PARTS (every
site:node:procs of the job, joined by "+") and LOOKAHEAD_START (the
reservation's start, Unix seconds). Without --script the parts are yours
to submit with the options 'lookahead status ID' prints: qsub's on a
Torque/Maui site, sbatch's (--reservation=…) on a Slurm site.

Exit codes: 0 submitted, 2 invalid job, 3 broker unreachable,
4 refused (forbidden, over budget, walltime too long, queue-full: your user
or account has as many active grid jobs as the broker allows).`,
		Example: `  lookahead submit --procs 64 --walltime 2h --max-price 2.5 --user alice --account proj1
  lookahead submit job.json -o json
  lookahead submit --procs 48 --walltime 1h --max-price 3 --script run.sh`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSubmit(cmd.Context(), cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.job.ID, "id", "", "job id (default: the broker assigns gN)")
	f.IntVar(&o.job.Procs, "procs", 0, "processors")
	f.DurationVar(&o.walltime, "walltime", 0, "walltime on the reference CPU, e.g. 2h")
	f.Float64Var(&o.job.MaxPrice, "max-price", 0, "highest price in credits per CPU-hour")
	f.Float64Var(&o.job.MinSpeed, "min-speed", 0, "slowest node speed allowed")
	f.Int64Var(&o.job.MemMB, "mem-mb", 0, "least node memory in MB")
	f.StringSliceVar(&o.job.Features, "feature", nil, "node feature required (repeatable)")
	f.StringVar(&o.job.Criterion, "criterion", "",
		"how the planner ranks the job's allocations: "+strings.Join(forecast.Criteria(), ", ")+
			` (empty: the broker's planning.criterion, free-first unless set; docs/formats.md, "The criterion")`)
	f.DurationVar(&o.deadline, "deadline", 0, "when the job must be finished, from now (e.g. 12h): --criterion cheapest takes the cheapest allocation finishing by then, free-first waits for free time no longer")
	f.IntVar(&o.job.MaxSites, "max-sites", 0, "most sites the job may span (0: any)")
	f.StringVar(&o.job.User, "user", "", "grid user the job runs as")
	f.StringVar(&o.job.Account, "account", "", "account charged")
	f.StringVar(&o.requestID, "request-id", "", "idempotency key (default: random; reuse it to retry safely)")
	f.StringVar(&o.script, "script", "", "job script the broker runs in the reservations (- for stdin; at most 256 KiB)")
	o.conn.Bind(f)
	cli.AddOutputFlag(cmd, &o.output)
	return cmd
}

func runSubmit(ctx context.Context, cmd *cobra.Command, o *submitOptions, args []string) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	job, err := submitJob(cmd, o, args)
	if err != nil {
		return err
	}
	if err := job.Validate(); err != nil {
		return flagOfJobError(cmd, err)
	}
	if w := job.MaxPrice * float64(job.Procs) * float64(job.Walltime) / 3600; math.IsInf(w, 0) || math.IsNaN(w) {
		return cli.Usagef("max_price %g × %d procs × %s is not a finite number of credits: lower --max-price", job.MaxPrice, job.Procs, fmtDur(job.Walltime))
	}
	script, err := readScript(cmd, o.script, args)
	if err != nil {
		return err
	}
	c, err := o.conn.Dial(ctx)
	if err != nil {
		return unavailable(err)
	}
	defer c.Close()
	reply, err := c.SubmitScript(ctx, job, script, o.requestID)
	if err != nil {
		return unavailable(err)
	}
	if o.output == cli.FormatJSON {
		if err := cli.WriteJSON(cmd.OutOrStdout(), reply); err != nil {
			return err
		}
	} else if reply.Code == wire.CodeOK {
		note := ""
		if reply.Duplicate {
			note = " (already submitted)"
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s%s\n", reply.Job, note)
		fmt.Fprintf(cmd.ErrOrStderr(), "worst-case cost %.2f credits held against the budget until reserved\n", reply.WorstCost)
	}
	return refusal(reply.Code, reply.Message)
}

// submitJob reads the job file (if any) and applies the flags set.
func submitJob(cmd *cobra.Command, o *submitOptions, args []string) (forecast.JobRequest, error) {
	var job forecast.JobRequest
	if len(args) == 1 {
		var r io.Reader = cmd.InOrStdin()
		if args[0] != "-" {
			f, err := os.Open(args[0])
			if err != nil {
				return job, cli.Usagef("job file: %w", err)
			}
			defer f.Close()
			r = f
		}
		j, err := forecast.DecodeJob(r)
		if err != nil {
			return job, fmt.Errorf("job file %s: %w", args[0], err)
		}
		job = *j
	}
	fs := cmd.Flags()
	set := func(name string, apply func()) {
		if fs.Changed(name) {
			apply()
		}
	}
	set("id", func() { job.ID = o.job.ID })
	set("procs", func() { job.Procs = o.job.Procs })
	if fs.Changed("walltime") && (o.walltime < time.Second || o.walltime%time.Second != 0) {
		return job, cli.Usagef("--walltime %s: must be whole seconds, at least 1s", durfmt.Duration(o.walltime))
	}
	set("walltime", func() { job.Walltime = int64(o.walltime / time.Second) })
	set("max-price", func() { job.MaxPrice = o.job.MaxPrice })
	set("min-speed", func() { job.MinSpeed = o.job.MinSpeed })
	set("mem-mb", func() { job.MemMB = o.job.MemMB })
	set("feature", func() { job.Features = o.job.Features })
	set("criterion", func() { job.Criterion = o.job.Criterion })
	set("max-sites", func() { job.MaxSites = o.job.MaxSites })
	if fs.Changed("deadline") && (o.deadline < time.Second || o.deadline%time.Second != 0) {
		return job, cli.Usagef("--deadline %s: must be whole seconds from now, at least 1s", durfmt.Duration(o.deadline))
	}
	set("deadline", func() { job.Deadline = time.Now().Add(o.deadline).Unix() })
	set("user", func() { job.User = o.job.User })
	set("account", func() { job.Account = o.job.Account })
	if len(args) == 0 && (!fs.Changed("procs") || !fs.Changed("walltime")) {
		return job, cli.Usagef("give a job file, or at least --procs and --walltime")
	}
	return job, nil
}

// jobFieldFlags are the submit flags that set a job request's fields.
var jobFieldFlags = []struct{ field, flag string }{{"procs", "procs"}, {"walltime", "walltime"}, {"max_price", "max-price"},
	{"min_speed", "min-speed"}, {"mem_mb", "mem-mb"}, {"deadline", "deadline"}, {"max_sites", "max-sites"},
	{"criterion", "criterion"}, {"user", "user"}, {"account", "account"}, {"features", "feature"}}

// flagOfJobError names the flag that set the field a job request's
// validation refused ("--max-price: job: max_price NaN, …"), as the user
// wrote it; a field from the job file is named as the file has it.
func flagOfJobError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	for _, f := range jobFieldFlags {
		if cmd.Flags().Changed(f.flag) && (strings.Contains(msg, ": "+f.field+" ") || strings.Contains(msg, ": "+f.field+"[")) {
			return cli.UsageError{Err: fmt.Errorf("--%s: %w", f.flag, err)}
		}
	}
	return err
}

// unavailable maps a failure to reach the broker to exit code 3.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errorsIs(err, client.ErrUnavailable):
		return cli.CodedError{Code: cli.ExitUnavailable, Err: err}
	case errorsIs(err, client.ErrBadConnection):
		return cli.UsageError{Err: err}
	}
	return err
}

// refusal maps a broker answer code to an error with the right exit code.
func refusal(code, msg string) error {
	switch code {
	case wire.CodeOK:
		return nil
	case wire.CodeInvalid:
		return cli.Usagef("refused (%s): %s", code, msg)
	case wire.CodeInternal:
		return fmt.Errorf("broker failed: %s", msg)
	}
	return cli.CodedError{Code: cli.ExitRefused, Err: fmt.Errorf("refused (%s): %s", code, msg)}
}

// readScript reads --script (nil when not given): a file, or - for
// standard input when the job itself does not come from there. An empty
// or oversized script is a usage error.
func readScript(cmd *cobra.Command, path string, args []string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	var r io.Reader = cmd.InOrStdin()
	if path == "-" {
		if len(args) == 1 && args[0] == "-" {
			return nil, cli.Usagef("--script -: standard input already holds the job file")
		}
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, cli.Usagef("--script: %w", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, wire.MaxScriptBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("--script %s: %w", path, err)
	case len(data) == 0:
		return nil, cli.Usagef("--script %s: empty", path)
	case len(data) > wire.MaxScriptBytes:
		return nil, cli.Usagef("--script %s: more than %d bytes", path, wire.MaxScriptBytes)
	}
	return data, nil
}

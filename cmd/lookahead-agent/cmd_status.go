package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"lookahead/agent"
	"lookahead/internal/cli"
	"lookahead/internal/durfmt"
	"lookahead/internal/natsconn"
	"lookahead/wire"
)

type statusOptions struct {
	output  string
	timeout time.Duration
}

func newStatusCommand(g *globalOptions) *cobra.Command {
	opts := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the running agent's status and forecast accuracy",
		Long: `Ask the running agent of this site (over NATS) for its status: the last
forecast (revision, age, nodes, slots, size), publications, whether it
runs grid jobs' parts (dispatch on; -o json: runs_parts), reservation
requests by result, the accuracy of its start-time forecasts for local
jobs (error of the first prediction against the real start, as a
histogram), and every local job waiting in the queue with the start the
last forecast predicts for it and the first start predicted for it — to
check the forecast job by job against the scheduler (Maui's showstart,
Slurm's squeue --start). The table shows the first ` + fmt.Sprint(queueRows) + ` waiting jobs, -o json
up to ` + fmt.Sprint(agent.MaxStatusQueue) + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckFormat(opts.output); err != nil {
				return err
			}
			if opts.timeout <= 0 {
				return cli.Usagef("--timeout %s: must be > 0", durfmt.Duration(opts.timeout))
			}
			c, err := g.load(cmd)
			if err != nil {
				return err
			}
			return runStatus(cmd.Context(), c, opts, cmd.OutOrStdout())
		},
	}
	cli.AddOutputFlag(cmd, &opts.output)
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 5*time.Second, "how long to wait for the agent")
	return cmd
}

func runStatus(ctx context.Context, c Config, opts *statusOptions, w io.Writer) error {
	nc, err := natsconn.Connect(ctx, c.natsConfig())
	if err != nil {
		return cli.Unreachable(err)
	}
	defer nc.Close()
	rctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	msg, err := nc.RequestWithContext(rctx, wire.AgentSubject(c.Site, agent.VerbStatus), nil)
	if errors.Is(err, nats.ErrNoResponders) {
		return cli.CodedError{Code: cli.ExitUnavailable, Err: fmt.Errorf("no agent of site %s answers on the NATS server %s: start it "+
			"(`systemctl start lookahead-agent`, or `lookahead-agent run`), or check site and nats.url", c.Site, nc.ConnectedUrlRedacted())}
	}
	if err != nil {
		return cli.CodedError{Code: cli.ExitUnavailable, Err: fmt.Errorf("agent of %s: %w", c.Site, err)}
	}
	var st agent.Status
	if err := json.Unmarshal(msg.Data, &st); err != nil {
		return fmt.Errorf("status reply of %s: %w", c.Site, err)
	}
	if opts.output == cli.FormatJSON {
		return cli.WriteJSON(w, st)
	}
	return printStatus(w, st, time.Now())
}

func printStatus(w io.Writer, st agent.Status, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "site\t%s\n", st.Site)
	fmt.Fprintf(tw, "revision\t%d\n", st.Revision)
	if st.Generated > 0 {
		fmt.Fprintf(tw, "last forecast\t%s ago (%d nodes, %d slots, %d bytes)\n",
			durfmt.Duration(now.Sub(time.Unix(st.Generated, 0)).Round(time.Second)), st.Nodes, st.Slots, st.Bytes)
	}
	fmt.Fprintf(tw, "published\t%d forecasts, %d heartbeats\n", st.Forecasts, st.Heartbeats)
	fmt.Fprintf(tw, "runs parts\t%s\n", runsParts(st.RunsParts))
	if st.LastError != "" {
		fmt.Fprintf(tw, "last error\t%s\n", st.LastError)
	}
	for _, k := range slices.Sorted(maps.Keys(st.Requests)) {
		fmt.Fprintf(tw, "requests %s\t%d\n", k, st.Requests[k])
	}
	acc := st.Accuracy
	fmt.Fprintf(tw, "start forecasts checked\t%d (early %d, late %d)\n", acc.Checked, acc.Early, acc.Late)
	if acc.Checked > 0 {
		fmt.Fprintf(tw, "mean |error|\tfirst prediction %s, last prediction %s, max %s\n",
			durfmt.Seconds(int64(acc.MeanAbsFirst+0.5)), durfmt.Seconds(int64(acc.MeanAbsLast+0.5)), durfmt.Seconds(acc.MaxAbsFirst))
		for i, n := range acc.Buckets {
			label := "> " + durfmt.Seconds(acc.BucketBounds[len(acc.BucketBounds)-1])
			if i < len(acc.BucketBounds) {
				label = "<= " + durfmt.Seconds(acc.BucketBounds[i])
			}
			fmt.Fprintf(tw, "  error %s\t%d\n", label, n)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printQueue(w, st.Queue, st.QueueTotal, now.Unix())
}

// runsParts says whether the agent runs grid jobs' parts.
func runsParts(on bool) string {
	if on {
		return "yes (dispatch on: the broker may plan jobs with a script here)"
	}
	return "no (dispatch off: jobs with a script are not planned here)"
}

// queueRows bounds the waiting jobs the table lists; -o json has up to
// agent.MaxStatusQueue.
const queueRows = 40

// printQueue lists waiting local jobs with their predicted starts, as
// times and as offsets from now.
func printQueue(w io.Writer, q []agent.QueuedJob, total int, now int64) error {
	fmt.Fprintf(w, "\nqueued local jobs: %d (predicted starts of the last forecast)\n", total)
	if total == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tUSER\tQUEUE\tPROCS\tWALLTIME\tWAITING\tPREDICTED START\tFIRST PREDICTED")
	for i, j := range q {
		if i == queueRows {
			fmt.Fprintf(tw, "… %d more (-o json lists up to %d)\n", total-i, agent.MaxStatusQueue)
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", j.Job, dash(j.User), dash(j.Queue), j.Procs, durfmt.Seconds(j.Walltime),
			durfmt.Seconds(max(0, now-j.Submitted)), startAt(j.Start, now), startAt(j.FirstStart, now))
	}
	return tw.Flush()
}

// startAt shows a predicted start as a UTC time and how far from now.
func startAt(t, now int64) string {
	switch {
	case t == 0:
		return "beyond the horizon"
	case t <= now:
		return unixUTC(t) + " (now)"
	}
	return unixUTC(t) + " (in " + durfmt.Seconds(t-now) + ")"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

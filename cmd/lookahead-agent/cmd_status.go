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
forecast (revision, age, nodes, slots, size), publications, reservation
requests by result, and the accuracy of its start-time forecasts for local
jobs (error of the first prediction against the real start, as a histogram).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckFormat(opts.output); err != nil {
				return err
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
		return cli.CodedError{Code: cli.ExitUnavailable, Err: err}
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
			now.Sub(time.Unix(st.Generated, 0)).Round(time.Second), st.Nodes, st.Slots, st.Bytes)
	}
	fmt.Fprintf(tw, "published\t%d forecasts, %d heartbeats\n", st.Forecasts, st.Heartbeats)
	if st.LastError != "" {
		fmt.Fprintf(tw, "last error\t%s\n", st.LastError)
	}
	for _, k := range slices.Sorted(maps.Keys(st.Requests)) {
		fmt.Fprintf(tw, "requests %s\t%d\n", k, st.Requests[k])
	}
	acc := st.Accuracy
	fmt.Fprintf(tw, "start forecasts checked\t%d (early %d, late %d)\n", acc.Checked, acc.Early, acc.Late)
	if acc.Checked > 0 {
		fmt.Fprintf(tw, "mean |error|\tfirst prediction %.0f s, last prediction %.0f s, max %d s\n",
			acc.MeanAbsFirst, acc.MeanAbsLast, acc.MaxAbsFirst)
		for i, n := range acc.Buckets {
			label := fmt.Sprintf("> %d s", acc.BucketBounds[len(acc.BucketBounds)-1])
			if i < len(acc.BucketBounds) {
				label = fmt.Sprintf("<= %d s", acc.BucketBounds[i])
			}
			fmt.Fprintf(tw, "  error %s\t%d\n", label, n)
		}
	}
	return tw.Flush()
}

package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"lookahead/broker/client"
	"lookahead/internal/cli"
	"lookahead/wire"
)

type sitesOptions struct {
	conn   client.Conn
	output string
}

func newSitesCommand() *cobra.Command {
	o := &sitesOptions{}
	cmd := &cobra.Command{
		Use:   "sites",
		Short: "Show every site the broker knows: forecast age, size, free processor-hours, staleness",
		Long: `Show each site: its forecast revision, how long since it was last heard of
(forecast or heartbeat), nodes and processors, the processor-hours its slots
offer between now and its horizon, and whether it is stale (silent longer
than the broker's site TTL, and so out of planning).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSites(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	o.conn.Bind(cmd.Flags())
	cli.AddOutputFlag(cmd, &o.output)
	return cmd
}

func runSites(ctx context.Context, w io.Writer, o *sitesOptions) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	reply, err := ask(ctx, &o.conn, func(ctx context.Context, c *client.Client) (wire.SitesReply, error) { return c.Sites(ctx) })
	if err != nil {
		return err
	}
	if o.output == cli.FormatJSON {
		return cli.WriteJSON(w, reply)
	}
	return writeSites(w, reply)
}

func writeSites(w io.Writer, reply wire.SitesReply) error {
	if len(reply.Sites) == 0 {
		_, err := fmt.Fprintln(w, "no sites have published a forecast yet")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SITE\tREVISION\tLAST HEARD\tNODES\tPROCS\tSLOTS\tFREE CPU-H\tHORIZON\tSTATE")
	for _, s := range reply.Sites {
		state := "fresh"
		if s.Stale {
			state = "STALE"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s ago\t%d\t%d\t%d\t%.0f\t%s\t%s\n", s.Site, s.Seq, fmtDur(s.Age), s.Nodes, s.Procs,
			s.Slots, s.FreeProcHours, fmtDur(max(0, s.Horizon-reply.Now)), state)
	}
	return tw.Flush()
}

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
		Long: `Show each site: its forecast revision, how long since the broker last heard
that forecast was current (the forecast itself or a heartbeat naming its
revision, by the broker's clock), nodes and processors, the processor-hours
its slots offer between now and its horizon, its clock's offset from the
broker's, and its state:

  fresh     planned on
  STALE     silent longer than the broker's site TTL: out of planning
  EXCLUDED  its latest forecast was refused (PROBLEM says why: invalid,
            over the broker's limits, generated too far ahead of the
            broker's clock): out of planning until a good forecast arrives
  SILENT    its agent did not answer a reserve or release request
            (PROBLEM says for how long, which request and the error): out of
            planning, whatever it publishes, until it answers again; the
            releases it is owed are retried every cycle

PROBLEM also shows a refused heartbeat, or one naming a revision the broker
does not hold.`,
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
	if err := writeSites(w, reply); err != nil {
		return err
	}
	return writeLeader(w, reply.Leader)
}

func writeSites(w io.Writer, reply wire.SitesReply) error {
	if len(reply.Sites) == 0 {
		_, err := fmt.Fprintln(w, "no sites have published a forecast yet")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SITE\tREVISION\tLAST HEARD\tNODES\tPROCS\tSLOTS\tFREE CPU-H\tHORIZON\tCLOCK\tSTATE\tPROBLEM")
	for _, s := range reply.Sites {
		state, problem := siteState(s, reply.Now)
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\n", s.Site, s.Seq, lastHeard(s), s.Nodes, s.Procs,
			s.Slots, s.FreeProcHours, fmtDur(max(0, s.Horizon-reply.Now)), fmtOffset(s.ClockOffset), state, clip(problem, 100))
	}
	return tw.Flush()
}

// siteState is a site's STATE column and its PROBLEM: not answering
// requests comes first (it holds the site out whatever it publishes).
func siteState(s wire.SiteStatus, now int64) (state, problem string) {
	switch {
	case s.Unanswered != "":
		problem = s.Unanswered
		if s.UnansweredSince > 0 {
			problem = "for " + fmtDur(max(0, now-s.UnansweredSince)) + ": " + problem
		}
		if s.Problem != "" {
			problem += "; " + s.Problem
		}
		return "SILENT", problem
	case s.Excluded:
		return "EXCLUDED", s.Problem
	case s.Stale:
		return "STALE", s.Problem
	}
	return "fresh", s.Problem
}

// lastHeard is the LAST HEARD column: "never" when the broker never took a
// forecast of the site (e.g. its only one was refused).
func lastHeard(s wire.SiteStatus) string {
	if s.LastSeen == 0 {
		return "never"
	}
	return fmtDur(max(0, s.Age)) + " ago"
}

// fmtOffset renders a site's clock offset from the broker's: "ok" within
// a few seconds, else how far ahead (+) or behind (-).
func fmtOffset(d int64) string {
	switch {
	case d > 5:
		return "+" + fmtDur(d)
	case d < -5:
		return "-" + fmtDur(-d)
	}
	return "ok"
}

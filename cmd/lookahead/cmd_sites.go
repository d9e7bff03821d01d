package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"lookahead/broker/client"
	"lookahead/internal/cli"
	"lookahead/wire"
)

type sitesOptions struct {
	conn   client.Conn
	output string
	query  client.SiteQuery
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
does not hold. OFFLINE: the site's agent said it stopped or cannot forecast.

PARTS says whether the site's agent runs grid jobs' parts (its dispatch is
on): yes; no (a job submitted with --script is not planned there); ? (its
agent is older and does not say: planned as yes). -o json: runs_parts,
absent when the agent does not say.

With many sites, --sort orders them (name; state, the worst first; heard,
the longest silent first; free, nodes, procs, the most first; clock, the
farthest from the broker's first), --state keeps the sites in some states
(e.g. --state silent,excluded,offline,stale: every site out of planning)
and --match the sites whose name contains a text. -o json applies them
too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSites(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	o.conn.Bind(cmd.Flags())
	cli.AddOutputFlag(cmd, &o.output)
	cmd.Flags().StringVar(&o.query.Sort, "sort", "name", "order: "+strings.Join(client.SiteSorts, ", "))
	cmd.Flags().StringSliceVar(&o.query.States, "state", nil, "keep only sites in these states: "+strings.Join(client.SiteStates, ", "))
	cmd.Flags().StringVar(&o.query.Match, "match", "", "keep only sites whose name contains this text (case ignored)")
	return cmd
}

func runSites(ctx context.Context, w io.Writer, o *sitesOptions) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	if err := o.query.Check("--sort", "--state"); err != nil {
		return cli.UsageError{Err: err}
	}
	reply, err := ask(ctx, &o.conn, func(ctx context.Context, c *client.Client) (wire.SitesReply, error) { return c.Sites(ctx) })
	if err != nil {
		return err
	}
	all := len(reply.Sites)
	reply.Sites = client.SelectSites(reply.Sites, o.query)
	if o.output == cli.FormatJSON {
		return cli.WriteJSON(w, reply)
	}
	if len(reply.Sites) == 0 && all > 0 {
		_, err := fmt.Fprintf(w, "none of the %d sites is in the states or matches the name asked\n", all)
		return err
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
	fmt.Fprintln(tw, "SITE\tREVISION\tLAST HEARD\tNODES\tPROCS\tSLOTS\tFREE CPU-H\tHORIZON\tCLOCK\tPARTS\tSTATE\tPROBLEM")
	for _, s := range reply.Sites {
		state, problem := siteState(s, reply.Now)
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\n", s.Site, s.Seq, lastHeard(s), s.Nodes, s.Procs,
			s.Slots, s.FreeProcHours, fmtDur(max(0, s.Horizon-reply.Now)), fmtOffset(s.ClockOffset), client.RunsParts(s), state, clip(problem, 100))
	}
	return tw.Flush()
}

// siteState is a site's STATE column (client.SiteState, upper case when
// the site is out of planning) and its PROBLEM: for a silent site, why and
// for how long.
func siteState(s wire.SiteStatus, now int64) (state, problem string) {
	state = client.SiteState(s)
	if state == client.SiteFresh {
		return state, s.Problem
	}
	problem = s.Problem
	if state == client.SiteSilent {
		problem = s.Unanswered
		if s.UnansweredSince > 0 {
			problem = "for " + fmtDur(max(0, now-s.UnansweredSince)) + ": " + problem
		}
		if s.Problem != "" {
			problem += "; " + s.Problem
		}
	}
	return strings.ToUpper(state), problem
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

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lookahead/broker/client"
	"lookahead/forecast"
	"lookahead/internal/cli"
	"lookahead/wire"
)

type auditOptions struct {
	conn   client.Conn
	output string
	repair bool
	job    string
	site   string
	since  string
	limit  int
}

func newAuditCommand() *cobra.Command {
	o := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Compare the broker's reservations with every site's real ones (Maui showres, Slurm scontrol)",
		Long: `Ask the broker to fetch every site's lookahead reservations (the agents read
them from the scheduler — Maui's showres, Slurm's scontrol show reservation —
not from memory) and compare them with its records:

  missing   the broker believes in it, the site does not have it
  orphaned  the site has it, the broker does not know it
  drifted   both know it, but start, end, nodes or ACL differ

--repair releases orphans and re-requests missing reservations, and prints
what it did; drifted reservations are reported only.

Repairs release orphans first (one may hold the processors a missing
reservation needs), then re-request missing reservations with the job's
original request. Only reservations whose ACL carries lookahead's binding
account are released; others named like lookahead's are reported.

Exit codes: 0 no findings (with --repair: every finding repaired),
4 findings left (without --repair, or repairs the site refused, drifted
ones) or, without --repair, sites that did not answer, 1 a repair could
not be done (a site did not answer, the release or reserve failed, not
recorded), 3 broker unreachable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAudit(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().BoolVar(&o.repair, "repair", false, "release orphans and re-request missing reservations")
	o.conn.Bind(cmd.Flags())
	cli.AddOutputFlag(cmd, &o.output)
	cmd.AddCommand(newAuditLogCommand())
	return cmd
}

func runAudit(ctx context.Context, w io.Writer, o *auditOptions) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	rep, err := ask(ctx, &o.conn, func(ctx context.Context, c *client.Client) (wire.AuditReport, error) { return c.Audit(ctx, o.repair) })
	if err != nil {
		return err
	}
	if o.output == cli.FormatJSON {
		err = cli.WriteJSON(w, rep)
	} else {
		err = writeAudit(w, rep)
	}
	if err != nil {
		return err
	}
	if err := refusal(rep.Code, rep.Message); err != nil {
		return err
	}
	return auditOutcome(rep, o.repair)
}

// auditOutcome is the exit of an audit: 0 when every site answered and
// nothing is wrong (or, with --repair, everything found was repaired); 1
// when a repair could not be done (the machinery failed, or, with
// --repair, a site did not answer); 4 when findings remain (without
// --repair, or repairs refused or reported only) or, without --repair,
// sites did not answer.
func auditOutcome(rep wire.AuditReport, repair bool) error {
	left, failed := len(rep.Findings), 0
	if repair {
		left = 0
		for _, f := range rep.Findings {
			switch f.RepairCode {
			case wire.RepairDone:
			case wire.RepairFailed:
				failed++
			default: // refused, reported only, or a broker that does not say
				left++
			}
		}
	}
	if repair {
		failed += len(rep.Errors) // a site that did not answer was not repaired
	}
	if failed > 0 {
		return cli.CodedError{Code: cli.ExitFailure, Err: fmt.Errorf("audit: %d repairs failed, %d findings left, %d sites unanswered", failed, left, len(rep.Errors))}
	}
	if left+len(rep.Errors) > 0 {
		return cli.CodedError{Code: cli.ExitRefused, Err: fmt.Errorf("audit: %d findings left, %d sites unanswered", left, len(rep.Errors))}
	}
	return nil
}

func writeAudit(w io.Writer, rep wire.AuditReport) error {
	fmt.Fprintf(w, "audited %d sites, %d reservations\n", len(rep.Sites), rep.Checked)
	for _, e := range rep.Errors {
		fmt.Fprintf(w, "  no answer: %s\n", e)
	}
	if len(rep.Findings) == 0 {
		_, err := fmt.Fprintln(w, "no findings: the broker's records match every site that answered")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tSITE\tJOB\tRESERVATION\tFIELDS\tREPAIR")
	for _, f := range rep.Findings {
		repair := f.Repair
		if f.RepairCode != "" {
			repair = f.RepairCode + ": " + repair
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Kind, f.Site, f.Job, f.Reservation, strings.Join(f.Fields, ","), repair)
	}
	return tw.Flush()
}

func newAuditLogCommand() *cobra.Command {
	o := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Print the audit trail (every reserve, release, commit, rollback, charge)",
		Long: `Print records of the append-only audit stream, oldest first: who asked what,
when, under which ACL, the exact scheduler command run (Maui setres or
releaseres, Slurm scontrol), and the result.
--since takes a duration back from now (2h) or an RFC 3339 time.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAuditLog(cmd.Context(), cmd.OutOrStdout(), o, time.Now())
		},
	}
	cmd.Flags().StringVar(&o.job, "job", "", "only records of this grid job")
	cmd.Flags().StringVar(&o.site, "site", "", "only records from or about this site")
	cmd.Flags().StringVar(&o.since, "since", "", "only records from this time on (2h, or 2026-11-22T04:00:00Z)")
	cmd.Flags().IntVar(&o.limit, "limit", 0, "only the last N matching records")
	o.conn.Bind(cmd.Flags())
	cli.AddOutputFlag(cmd, &o.output)
	return cmd
}

// checkLogFilter refuses a filter no record can match (it would print
// nothing, as if the trail were empty) before asking the broker.
func (o *auditOptions) checkLogFilter() error {
	if o.limit < 0 {
		return cli.Usagef("--limit %d: must be >= 0 (0: every matching record)", o.limit)
	}
	if o.job != "" {
		if err := checkJobID(o.job); err != nil {
			return cli.Usagef("--job: %w", err)
		}
	}
	if o.site != "" && !forecast.IsPlainName(o.site) {
		return cli.Usagef("--site %q: not a plain name (letters, digits, _ . -), as a site's name", forecast.Clip(o.site, forecast.MaxNameBytes))
	}
	return nil
}

func runAuditLog(ctx context.Context, w io.Writer, o *auditOptions, now time.Time) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	since, err := parseSince(o.since, now)
	if err != nil {
		return err
	}
	if err := o.checkLogFilter(); err != nil {
		return err
	}
	c, err := o.conn.Dial(ctx)
	if err != nil {
		return unavailable(err)
	}
	defer c.Close()
	recs, bad, err := c.AuditLog(ctx, client.LogFilter{Job: o.job, Site: o.site, Since: since, Limit: o.limit})
	if err != nil {
		return unavailable(err)
	}
	if o.output == cli.FormatJSON {
		if recs == nil {
			recs = []wire.AuditRecord{}
		}
		return cli.WriteJSON(w, recs)
	}
	return writeAuditLog(w, recs, bad)
}

// writeAuditLog prints the trail. ORIGIN is the subject's (the publisher
// the server let through); a record whose body claims otherwise is marked
// with "*" and its claim shown first in DETAIL.
func writeAuditLog(w io.Writer, recs []wire.AuditRecord, bad int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tORIGIN\tACTION\tJOB\tSITE\tACTOR\tCODE\tDETAIL")
	forged := 0
	for _, r := range recs {
		detail, origin := r.Message, r.Origin
		if len(r.Command) > 0 {
			detail = strings.TrimSpace(strings.Join(r.Command, " ") + "  " + detail)
		}
		if r.Mismatch != "" {
			forged++
			origin += "*"
			detail = "[" + r.Mismatch + "] " + detail
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", time.Unix(r.Time, 0).UTC().Format(time.DateTime), origin,
			r.Action, r.Job, r.Site, wire.Clip(r.Actor, 40), r.Code, clip(detail, 90))
	}
	if forged > 0 {
		fmt.Fprintf(tw, "(* %d records whose body disagrees with the subject they were published on: shown with the subject's origin)\n", forged)
	}
	if bad > 0 {
		fmt.Fprintf(tw, "(%d undecodable records skipped)\n", bad)
	}
	return tw.Flush()
}

func parseSince(s string, now time.Time) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d).Unix(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, cli.Usagef("--since %q: want a duration (2h) or an RFC 3339 time", s)
	}
	return t.Unix(), nil
}

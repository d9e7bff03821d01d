package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lookahead/broker/client"
	"lookahead/internal/cli"
	"lookahead/internal/durfmt"
	"lookahead/wire"
)

type statusOptions struct {
	conn   client.Conn
	output string
	all    bool
}

func newStatusCommand() *cobra.Command {
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status [ID]",
		Short: "Show the grid queue, or one job with its plan and reservations",
		Long: `Without an ID: every active grid job (waiting, committing, reserved, running)
with its planned or reserved start and sites; --all adds ended jobs (the
broker keeps them for its retention period, 7 days by default). With an ID:
that job in detail, including its reservations on each site.

You see the jobs your NATS user submitted or may act for (broker.yaml
identities); operators (broker.yaml operators) see every job. The broker
answers in pages that each fit in one NATS message; status fetches them all.

States: waiting (queued; "plan" shows where the last cycle put it),
committing (reserve requests out), reserved (held on all its sites),
dispatched (submitted with --script: every part is queued on its site),
running, finished, failed, cancelled, expired (never started in its
reservation).

A job submitted with --script lists its parts: the site, the local job id
and user, the part's state (dispatched, started, finished, failed,
deleted), its real start (and how far it was from the reserved start),
its end, exit status and where its output goes.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return runStatus(cmd.Context(), cmd.OutOrStdout(), o, id)
		},
	}
	cmd.Flags().BoolVarP(&o.all, "all", "a", false, "include finished, failed, cancelled and expired jobs")
	o.conn.Bind(cmd.Flags())
	cli.AddOutputFlag(cmd, &o.output)
	return cmd
}

func runStatus(ctx context.Context, w io.Writer, o *statusOptions, id string) error {
	if err := cli.CheckFormat(o.output); err != nil {
		return err
	}
	if id != "" {
		if err := checkJobID(id); err != nil {
			return err
		}
	}
	reply, err := ask(ctx, &o.conn, func(ctx context.Context, c *client.Client) (wire.StatusReply, error) { return c.Status(ctx, id, o.all) })
	if err != nil {
		return err
	}
	if err := refusal(reply.Code, reply.Message); err != nil {
		return err
	}
	if o.output == cli.FormatJSON {
		return cli.WriteJSON(w, reply)
	}
	if id != "" && len(reply.Jobs) == 1 {
		err = writeJobDetail(w, reply.Jobs[0], reply.Now)
	} else {
		err = writeJobTable(w, reply.Jobs, reply.Now)
	}
	if err != nil {
		return err
	}
	return writeLeader(w, reply.Leader)
}

// orderText names a queue order and says what it plans first.
func orderText(order string) string {
	return order + " order (" + client.OrderMeaning(order) + ")"
}

func writeJobTable(w io.Writer, jobs []wire.JobStatus, now int64) error {
	if len(jobs) == 0 {
		_, err := fmt.Fprintln(w, "no jobs")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATE\tUSER\tPROCS\tWALLTIME\tMAX PRICE\tQUEUE\tSTART\tSITES\tCOST\tNOTE")
	for _, j := range jobs {
		start, sites, queue := "-", "-", "-"
		if j.Plan != nil && j.Plan.Placed() {
			start, sites = fmtWhen(j.Plan.Start, now), strings.Join(j.Plan.Sites(), ",")
		} else if j.Plan != nil && j.Plan.Error != "" {
			sites = "not placed (status ID says why)"
		}
		if j.Queue != nil {
			queue = fmt.Sprintf("%d/%d", j.Queue.Position, j.Queue.Of)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%.4g\t%s\t%s\t%s\t%s\t%s\n", j.Job.ID, j.State, j.Job.User, j.Job.Procs,
			fmtDur(j.Job.Walltime), j.Job.MaxPrice, queue, start, sites, fmtCost(j.Cost), clip(rowNote(j), 60))
	}
	return tw.Flush()
}

// rowNote is a table row's note: the broker's message, else, for a job
// the last cycle did not place, the first reason its why gives (`status
// ID` prints the whole why and what would help).
func rowNote(j wire.JobStatus) string {
	if j.Message != "" || j.Plan == nil || j.Plan.Placed() || j.Plan.Error == "" {
		return j.Message
	}
	why := j.Plan.Why
	if why == "" {
		why = strings.TrimPrefix(j.Plan.Error, "no-fit: ")
	}
	first, _, _ := strings.Cut(why, "; ")
	return first
}

func writeJobDetail(w io.Writer, j wire.JobStatus, now int64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	r := j.Job
	fmt.Fprintf(tw, "job\t%s\nstate\t%s\nuser/account\t%s/%s\nrequest\t%d procs × %s, max %.4g credits/CPU-h, %s\n",
		r.ID, j.State, r.User, r.Account, r.Procs, fmtDur(r.Walltime), r.MaxPrice, statusCriterion(j))
	fmt.Fprintf(tw, "worst case\t%.2f credits\ncharged\t%s\nattempts\t%d\n", j.WorstCost, fmtCost(j.Cost), j.Attempts)
	if j.Message != "" {
		fmt.Fprintf(tw, "note\t%s\n", j.Message)
	}
	if p := j.Plan; p != nil {
		if p.Placed() {
			fmt.Fprintf(tw, "plan\t%s → %s (%s), cost %.2f\n", fmtWhen(p.Start, now), fmtWhen(p.End, now), fmtDur(p.End-p.Start), p.Cost)
			for _, part := range p.Parts {
				fmt.Fprintf(tw, "  part\t%s/%s × %d\n", part.Site, part.Node, part.Procs)
			}
			if p.Why != "" {
				fmt.Fprintf(tw, "  why\t%s\n", p.Why)
			}
		} else {
			fmt.Fprintf(tw, "plan\tnot placed: %s\n", strings.TrimPrefix(p.Error, "no-fit: "))
			if p.Why != "" {
				fmt.Fprintf(tw, "  why\t%s\n", p.Why)
			}
		}
	}
	if q := j.Queue; q != nil {
		fmt.Fprintf(tw, "queue\t%d of %d, %s\n", q.Position, q.Of, orderText(q.Order))
	}
	for _, res := range j.Reservations {
		fmt.Fprintf(tw, "reservation\t%s on %s, %s → %s, %s%s\n", res.ID, res.Site, fmtWhen(res.Start, now), fmtWhen(res.End, now), fmtNodes(res.Nodes), releaseNote(j, res.Site))
		if res.Submit != "" && j.ScriptBytes == 0 {
			fmt.Fprintf(tw, "  %s\t%s\n", submitCommand(res.Submit), res.Submit)
		}
	}
	if owed := owedElsewhere(j); len(owed) > 0 {
		fmt.Fprintf(tw, "release owed\t%s (the broker retries until the site answers)\n", strings.Join(owed, ", "))
	}
	if j.ScriptBytes > 0 {
		fmt.Fprintf(tw, "script\t%d bytes\n", j.ScriptBytes)
	}
	writeParts(tw, j, now)
	return tw.Flush()
}

// writeParts lists a dispatched job's parts.
func writeParts(w io.Writer, j wire.JobStatus, now int64) {
	for _, p := range j.Parts {
		local := "-"
		if p.LocalID != "" {
			local = p.LocalID + " as " + p.LocalUser
		}
		fmt.Fprintf(w, "part %d\t%s: %s, %s\n", p.Part, p.Site, p.State, local)
		if p.Start != 0 {
			skew := ""
			if j.Plan != nil {
				skew = fmt.Sprintf(" (%+ds from the reserved start)", p.Start-j.Plan.Start)
			}
			fmt.Fprintf(w, "  started\t%s%s\n", fmtWhen(p.Start, now), skew)
		}
		if p.End != 0 {
			fmt.Fprintf(w, "  ended\t%s\n", fmtWhen(p.End, now))
		}
		if p.ExitStatus != nil {
			fmt.Fprintf(w, "  exit status\t%d\n", *p.ExitStatus)
		}
		if p.Output != "" {
			fmt.Fprintf(w, "  output\t%s\n  error\t%s\n", p.Output, p.Error)
		}
		if p.Message != "" {
			fmt.Fprintf(w, "  note\t%s\n", p.Message)
		}
	}
}

func fmtNodes(nodes []wire.NodeProcs) string {
	var parts []string
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("%s:%d", n.Node, n.Procs))
	}
	return strings.Join(parts, " ")
}

// fmtWhen renders a Unix time as UTC clock time with its distance from now.
func fmtWhen(t, now int64) string {
	rel := "now"
	switch d := t - now; {
	case d > 0:
		rel = "in " + fmtDur(d)
	case d < 0:
		rel = fmtDur(-d) + " ago"
	}
	return time.Unix(t, 0).UTC().Format("15:04:05") + " (" + rel + ")"
}

// fmtDur renders seconds as every lookahead binary does (internal/durfmt):
// exact, in hours at most, a Go duration (45s, 1m30s, 2h05m07s, 100h).
func fmtDur(s int64) string { return durfmt.Seconds(s) }

func fmtCost(c float64) string {
	if c == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", c)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// owedElsewhere lists the sites that owe the job a release and that no
// reservation line above marks "(release pending)": every such site while
// the job holds reservations (e.g. a site that did not answer a reserve
// while the job went on to other sites), else those with no reservation.
func owedElsewhere(j wire.JobStatus) []string {
	var out []string
	for _, site := range j.Releasing {
		listed := slices.ContainsFunc(j.Reservations, func(r wire.Reservation) bool { return r.Site == site })
		if wire.HoldsReservations(j.State) || !listed {
			out = append(out, site)
		}
	}
	return out
}

// releaseNote says, for a job that no longer holds its reservations,
// whether a site's reservation is released or its release still owed.
func releaseNote(j wire.JobStatus, site string) string {
	switch {
	case wire.HoldsReservations(j.State):
		return ""
	case slices.Contains(j.Releasing, site):
		return " (release pending)"
	}
	return " (released)"
}

// submitCommand names the batch command a reservation's submit options
// are for: sbatch for a Slurm site's (--reservation=…), qsub otherwise.
func submitCommand(opts string) string {
	if strings.HasPrefix(opts, "--reservation=") {
		return "sbatch"
	}
	return "qsub"
}

// statusCriterion is the criterion the broker plans the job with (a
// broker that does not say: the request's own or the format's default).
func statusCriterion(j wire.JobStatus) string {
	if j.Criterion != "" {
		return j.Criterion
	}
	return j.Job.CriterionOrDefault()
}

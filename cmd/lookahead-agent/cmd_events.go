package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"lookahead/internal/cli"
	"lookahead/torque"
	"lookahead/torque/tail"
)

type eventsOptions struct {
	output  string
	start   string
	follow  bool
	sources []string
}

func newEventsCommand(g *globalOptions) *cobra.Command {
	opts := &eventsOptions{}
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the pbs_server events the agent would see",
		Long: `Read pbs_server's server_logs and accounting files (torque.server_logs,
torque.accounting or torque.pbs_home; times in torque.timezone) and, with
--follow and torque.scheduler_listen set, the scheduler-port notifications,
and print every event the agent would react to: job queued, started, ended,
deleted, state changes, node state changes, server restarts.

This is a diagnostic: it keeps its read positions in a temporary directory
removed on exit and never touches the running agent's state. Lines that do
not parse are reported on stderr and counted at the end.

Torque sites only: a Slurm site (backend: slurm) has no such log; its agent
polls the Slurm clients every intervals.refresh (docs/slurm.md).`,
		Example: `  lookahead-agent events --start beginning            # everything in today's files
  lookahead-agent events --follow -o json             # live, one JSON object per line`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckFormat(opts.output); err != nil {
				return err
			}
			if _, err := tail.ParseStart(opts.start); err != nil {
				return cli.UsageError{Err: fmt.Errorf("--start: %w", err)}
			}
			if err := cli.CheckChoices("--source", opts.sources, eventSources); err != nil {
				return err
			}
			c, err := g.load(cmd)
			if err != nil {
				return err
			}
			return runEvents(cmd.Context(), c, opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cli.AddOutputFlag(cmd, &opts.output)
	f := cmd.Flags()
	f.StringVar(&opts.start, "start", "beginning", "where to start reading the files: beginning or end")
	f.BoolVarP(&opts.follow, "follow", "f", false, "keep following until interrupted (also listens on torque.scheduler_listen)")
	f.StringSliceVar(&opts.sources, "source", eventSources, "sources to read: "+strings.Join(eventSources, ", "))
	return cmd
}

// eventSources are what --source can name.
var eventSources = []string{torque.SourceServerLog, torque.SourceAccounting, torque.SourceSchedPort}

func runEvents(ctx context.Context, c Config, opts *eventsOptions, w, errw io.Writer) error {
	loc, err := time.LoadLocation(c.Torque.Timezone)
	if err != nil {
		return cli.UsageError{Err: fmt.Errorf("torque.timezone %q: %w", c.Torque.Timezone, err)}
	}
	start, _ := tail.ParseStart(opts.start)
	tmp, err := os.MkdirTemp("", "lookahead-events-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p := &eventPrinter{w: w, json: opts.output == cli.FormatJSON}
	var tailers []*torque.Tailer
	for _, k := range []torque.LogKind{torque.ServerLog, torque.AccountingLog} {
		if !wants(opts.sources, k.String()) {
			continue
		}
		dir := c.serverLogs()
		if k == torque.AccountingLog {
			dir = c.accountingDir()
		}
		t, err := torque.NewTailer(torque.TailerConfig{Kind: k, Dir: dir, Location: loc, Start: start,
			Positions: filepath.Join(tmp, k.String()+".pos"), CommitEvery: 1000,
			OnReject: func(path string, off int64, line string, err error) {
				fmt.Fprintf(errw, "%s offset %d: %v: %q\n", path, off, err, line)
			}}, p.print)
		if err != nil {
			return err
		}
		tailers = append(tailers, t)
	}
	if !opts.follow {
		return syncOnce(ctx, tailers, errw)
	}
	return followEvents(ctx, c, opts, tailers, p)
}

func wants(sources []string, s string) bool {
	for _, x := range sources {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

func syncOnce(ctx context.Context, tailers []*torque.Tailer, errw io.Writer) error {
	for _, t := range tailers {
		if err := t.Sync(ctx); err != nil {
			return cli.CodedError{Code: cli.ExitUnavailable, Err: err}
		}
		if n := t.Rejected(); n > 0 {
			fmt.Fprintf(errw, "%d lines did not parse\n", n)
		}
	}
	return nil
}

func followEvents(ctx context.Context, c Config, opts *eventsOptions, tailers []*torque.Tailer, p *eventPrinter) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, t := range tailers {
		g.Go(func() error { return t.Run(ctx) })
	}
	if wants(opts.sources, torque.SourceSchedPort) && c.Torque.SchedulerListen != "" {
		servers := []string{"127.0.0.1"}
		if c.Torque.Server != "" {
			servers = []string{c.Torque.Server}
		}
		l, err := torque.NewListener(torque.ListenerConfig{Addr: c.Torque.SchedulerListen, Servers: servers}, p.print)
		if err != nil {
			return cli.CodedError{Code: cli.ExitUnavailable, Err: err}
		}
		g.Go(func() error { return l.Run(ctx) })
	}
	return g.Wait()
}

// eventPrinter writes events as text lines or JSON lines; safe for
// concurrent use.
type eventPrinter struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
}

func (p *eventPrinter) print(_ context.Context, ev torque.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		ev.Text = ""
		return json.NewEncoder(p.w).Encode(ev)
	}
	subject := ev.Job
	if ev.Node != "" {
		subject = "node " + ev.Node
	}
	detail := ""
	switch {
	case ev.Kind == torque.SchedulerNotified:
		detail = ev.Code.String()
	case ev.To != "":
		detail = ev.From + " -> " + ev.To
	case ev.ExitStatus != nil:
		detail = fmt.Sprintf("exit %d", *ev.ExitStatus)
	}
	_, err := fmt.Fprintf(p.w, "%s  %-11s %-16s %-10s %s\n", ev.Time.Format(time.RFC3339), ev.Source, ev.Kind, subject, detail)
	return err
}

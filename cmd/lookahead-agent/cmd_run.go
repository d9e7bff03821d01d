package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"lookahead/agent"
	"lookahead/internal/cli"
	"lookahead/internal/metrics"
	"lookahead/internal/natsconn"
)

func newRunCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the agent daemon",
		Long: `Run the agent: forecast the site at start, after every debounced burst of
cluster events and at every refresh; publish each forecast on NATS and in the
forecast bucket (a heartbeat when nothing changed); serve the broker's
reserve/release/list requests. SIGTERM or SIGINT stop it cleanly: the current
forecast is abandoned, the service stops, the NATS connection is drained.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.load(cmd)
			if err != nil {
				return err
			}
			return runRun(cmd.Context(), c, g.warnings...)
		},
	}
	cmd.Flags().String("metrics-listen", "", `Prometheus listener address, e.g. 127.0.0.1:9464; "off" disables (config key metrics.listen)`)
	return cmd
}

func runRun(ctx context.Context, c Config, warnings ...string) error {
	base, err := newLogger(os.Stderr, c.LogLevel)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	log := base.With().Str("site", c.Site).Str("component", "daemon").Logger()
	for _, w := range warnings {
		log.Warn().Msg(w) // the JSON log, never a line of plain text in it
	}
	if c.simulated() {
		if _, err := simulatedSite(c); err == nil { // one that cannot be built fails every snapshot with the reason
			if left := simulatedTraceLeftOut(c); left != "" {
				log.Warn().Str("trace", c.Simulated.Trace).Msg("simulated.trace: " + left)
			}
		}
	}
	if created, err := ensureStateDir(c); err != nil {
		return err
	} else if created {
		log.Info().Str("state_dir", c.StateDir).Msg("state_dir did not exist: created it")
	}
	met, reg := agentMetrics()
	msrv := &metrics.Server{Addr: c.Metrics.Listen, Gatherer: reg,
		ErrorLog: cli.HTTPErrorLog(base.With().Str("site", c.Site).Logger(), "metrics")}
	if _, err := msrv.Listen(); err != nil {
		return err
	}
	msrv.SetNotReady("connecting to NATS")
	nc, err := natsconn.Connect(ctx, c.natsConfig())
	if err != nil {
		return cli.Unreachable(err)
	}
	defer nc.Drain()
	natsconn.LogEvents(nc, base.With().Str("site", c.Site).Str("component", "nats").Logger())
	ac, _ := c.agentConfig()
	ac.Dispatch.OutputCopied = logOutputDelivery(ctx, c, log)
	deps := agent.Deps{Conn: nc, Snapshotter: snapshotter(c, ""), Engine: engine(c), Metrics: met, Log: &base,
		JobEnds: jobEnds(c)}
	if c.Engine == "maui" {
		deps.CheckEngine = builtinEngine(c) // reserve re-checks must answer within the broker's deadline
	}
	deps.Reserver, err = reserver(c)
	if err != nil {
		return err
	}
	if deps.Reserver == nil {
		log.Warn().Msg("no reservation backend configured: the reserve/release/list service is off")
	}
	deps.Holder = holder(c)
	if deps.Executor, err = executor(c); err != nil {
		return err
	}
	a, err := agent.New(ac, deps)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	srcs, err := sources(c, a, log, met)
	if err != nil {
		return err
	}
	a.AddSources(srcs...)
	log.Info().Str("backend", c.Backend).Str("engine", c.Engine).Str("nats", c.NATS.URL).Msg("agent starting")
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.Run(gctx) })
	g.Go(func() error { return msrv.Run(gctx) })
	g.Go(func() error { return watchReady(gctx, a, msrv, ac.Refresh) })
	err = g.Wait()
	log.Info().Err(err).Msg("agent stopped")
	return err
}

func (c Config) natsConfig() natsconn.Config {
	n := c.NATS
	if n.Name == "" {
		n.Name = "lookahead-agent-" + c.Site
	}
	return n
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"lookahead/internal/version"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"lookahead/broker/daemon"
	"lookahead/internal/cli"
	"lookahead/internal/metrics"
	"lookahead/internal/natsconn"
)

func newRunCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the broker until SIGINT/SIGTERM",
		Long: `Run the broker: replay the grid queue from JetStream, roll back commits a
previous broker left half done, serve submit/cancel/status/plan/sites/audit
over NATS, and plan in cycles. Logs are JSON lines on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, l, err := readConfig(cmd.Flags())
			if err != nil {
				return err
			}
			return runRun(cmd.Context(), cfg, l.Warnings...)
		},
	}
	addConfigFlags(cmd.Flags())
	return cmd
}

// logOutput is where the daemon logs (tests capture it).
var logOutput io.Writer = os.Stderr

func newLogger(level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, cli.Usagef("log_level %q: must be debug, info, warn or error", level)
	}
	return zerolog.New(logOutput).Level(lvl).With().Timestamp().Str("service", "lookahead-broker").Logger(), nil
}

// runRun wires NATS, metrics and the broker and runs them until ctx ends;
// the configuration's warnings are logged first.
func runRun(ctx context.Context, cfg Config, warnings ...string) error {
	log, err := newLogger(cfg.LogLevel)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		log.Warn().Msg(w)
	}
	wc, err := loadWeb(cfg.Web) // local files first: a bad one is named before NATS is tried
	if err != nil {
		return err
	}
	nc, err := natsconn.Connect(ctx, cfg.NATS)
	if err != nil {
		return cli.Unreachable(err)
	}
	defer nc.Drain()
	natsconn.LogEvents(nc, log.With().Str("component", "nats").Logger())
	reg := metrics.NewRegistry()
	m := metrics.NewBroker(reg)
	m.SetVersion(version.String())
	srv := &metrics.Server{Addr: cfg.Metrics.Listen, Gatherer: reg, ErrorLog: cli.HTTPErrorLog(log, "metrics")}
	if _, err := srv.Listen(); err != nil {
		return err
	}
	b, err := daemon.New(nc, daemonConfig(cfg, log, m))
	if err != nil {
		return cli.UsageError{Err: err}
	}
	ws, err := newWeb(wc, b, log)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(gctx) })
	if ws != nil {
		g.Go(func() error { return ws.Run(gctx) })
		log.Info().Str("web", ws.URL()).Msg("web view listening")
	}
	g.Go(func() error { return b.Run(gctx) })
	g.Go(func() error {
		if !followStandby(gctx, b, srv, log, 2*time.Second) {
			return nil
		}
		select {
		case <-b.Ready():
			log.Info().Str("nats", nc.ConnectedUrlRedacted()).Str("metrics", cfg.Metrics.Listen).Uint64("epoch", b.Epoch()).Msg("broker ready")
		case <-gctx.Done():
			return nil
		}
		followHealth(gctx, b, srv, log, 2*time.Second)
		return nil
	})
	err = g.Wait()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = nil // stopped while starting: a clean stop, like one after start
	}
	if daemon.SteppedDownOnRequest(err) {
		log.Info().Err(err).Msg("broker handed over; start it again to make it a standby")
		return nil
	}
	log.Info().Err(err).Msg("broker stopped")
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	return nil
}

// followStandby keeps /readyz on why the broker is not active (a standby,
// or starting) until it is ready; false when ctx ended first.
func followStandby(ctx context.Context, b *daemon.Broker, srv *metrics.Server, log zerolog.Logger, every time.Duration) bool {
	t := time.NewTicker(every)
	defer t.Stop()
	was := ""
	for {
		if _, why := b.Healthy(); why != was && b.Epoch() == 0 {
			srv.SetNotReady(why)
			if strings.HasPrefix(why, "standby") {
				log.Info().Str("why", why).Msg("broker not active")
			}
			was = why
		}
		select {
		case <-ctx.Done():
			return false
		case <-b.Ready():
			return true
		case <-t.C:
		}
	}
}

// followHealth keeps /readyz (and systemd's status) on what the broker
// reports: ready only while it is connected, can append to its job stream
// and its planning cycles succeed. A change is logged once; the first
// "ready" is the caller's (it logs where the broker listens).
func followHealth(ctx context.Context, b *daemon.Broker, srv *metrics.Server, log zerolog.Logger, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	was, wasWhy, first := false, "starting", true
	for {
		ok, why := b.Healthy()
		if ok != was || why != wasWhy {
			if ok {
				srv.SetReady()
				if !first {
					log.Info().Msg("broker ready")
				}
			} else {
				srv.SetNotReady(why)
				log.Warn().Str("why", why).Msg("broker not ready")
			}
			was, wasWhy = ok, why
		}
		first = false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func daemonConfig(cfg Config, log zerolog.Logger, m *metrics.Broker) daemon.Config {
	p := cfg.Planning
	planner := daemon.NewPlanner(daemon.PlannerOptions{
		Tiers: p.Tiers, MultiSiteFactor: p.MultiSite, StagingDelay: int64(p.StagingDelay / time.Second),
		Criterion: p.Criterion, Tolerance: p.Tolerance, FreeTolerance: p.FreeTolerance, FreeWindow: p.FreeWindow,
		Order: p.Order, Aging: p.Aging.Seconds(), SplitBacklog: p.SplitBacklog})
	c := daemon.Config{
		CycleInterval: p.Cycle, Debounce: p.Debounce, CommitLead: p.CommitLead,
		ReserveTimeout: p.ReserveTimeout, ForecastTTL: p.SiteTTL, StartMargin: p.StartMargin, StartGrace: p.StartGrace,
		MaxClockSkew: p.MaxClockSkew, Retain: cfg.Jobs.Retain, SnapshotInterval: cfg.Jobs.SnapshotInterval,
		Name: cfg.Leadership.Name, Replicas: cfg.Replicas, JSDomain: cfg.NATS.JSDomain, LeaseTTL: cfg.Leadership.LeaseTTL, Policy: cfg.Policy(), Log: log, Metrics: m,
	}
	c.UsePlanner(planner)
	return c
}

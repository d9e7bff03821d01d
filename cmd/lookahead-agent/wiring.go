package main

import (
	"lookahead/internal/version"
	"path/filepath"
	"strings"
	"time"

	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"

	"github.com/rs/zerolog"

	"github.com/prometheus/client_golang/prometheus"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/internal/cli"
	"lookahead/internal/metrics"
	"lookahead/maui"
	"lookahead/torque"
	"lookahead/torque/tail"
)

// snapshotter reads the cluster from Torque, or from a snapshot JSON file
// when file is set (forecast --snapshot).
func snapshotter(c Config, file string) agent.Snapshotter {
	if file != "" {
		return fileSnapshotter(file)
	}
	if c.simulated() {
		return simulatedSnapshotter(c)
	}
	if c.slurmBackend() {
		return slurmSite(c) // its reservations in force are holds of every snapshot
	}
	nodes := map[string]torque.NodeConfig{}
	for name, n := range c.Torque.Nodes {
		nodes[name] = n
	}
	for name, speed := range c.Torque.Speeds {
		n := nodes[name]
		n.Speed = speed
		nodes[name] = n
	}
	run := torque.NewExecRunner(torque.ExecConfig{Timeout: c.Torque.CommandTimeout})
	client := torque.NewClient(run, torque.ClientConfig{Site: c.Site, Qstat: c.Torque.Qstat, Pbsnodes: c.Torque.Pbsnodes,
		Server: c.Torque.Server, Default: torque.NodeConfig{Speed: c.Torque.DefaultSpeed}, Nodes: nodes,
		OnSkipped: skippedLogger(c)})
	holds, err := mauiReserver(c)
	if err != nil {
		return failedSnapshotter{err}
	}
	// Maui's reservations in force are part of the site's state.
	return agent.HoldingSnapshotter{Snapshotter: agent.TorqueSnapshotter{Client: client}, Holds: holds}
}

// skippedLogger logs each item of qstat/pbsnodes output that did not
// parse: the snapshot goes on without it (see torque.ItemError).
func skippedLogger(c Config) func(*torque.ItemError) {
	base, err := newLogger(os.Stderr, c.LogLevel)
	if err != nil {
		base = zerolog.New(os.Stderr).With().Timestamp().Logger()
	}
	log := base.With().Str("site", c.Site).Str("component", "torque").Logger()
	return func(it *torque.ItemError) {
		log.Warn().Str("where", it.Where).Str("item", it.Item).Err(it.Err).
			Msg("torque output item did not parse: skipped, its node is not offered / its job keeps its processors unplaced")
	}
}

// jobEnds dates grid parts' ends from the accounting log (nil for a
// simulated site or an unknown torque.timezone, which config reports).
func jobEnds(c Config) agent.JobEndFinder {
	loc, err := time.LoadLocation(c.Torque.Timezone)
	if c.simulated() || c.slurmBackend() || err != nil {
		return nil
	}
	return torque.AccountingEnds{Dir: c.accountingDir(), Location: loc}
}

type fileSnapshotter string

func (f fileSnapshotter) Snapshot(context.Context) (forecast.Snapshot, error) {
	fh, err := os.Open(string(f))
	if err != nil {
		return forecast.Snapshot{}, fmt.Errorf("snapshot file: %w", err)
	}
	defer fh.Close()
	var snap forecast.Snapshot
	dec := json.NewDecoder(fh)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&snap); err != nil {
		return forecast.Snapshot{}, fmt.Errorf("snapshot file %s: %w: %v", f, forecast.ErrInvalid, err)
	}
	return snap, nil
}

// engine is the configured forecaster: the built-in simulator, or the
// site's Maui in SIMULATION mode (a private copy under state_dir, never
// the production instance) with the site's maui.cfg policy.
func engine(c Config) agent.Engine {
	if c.Engine == "maui" {
		return agent.MauiEngine{Sim: simulator(c), Horizon: c.Horizon, Pricing: c.pricing()}
	}
	return builtinEngine(c)
}

// simulator is a private Maui in SIMULATION mode: the configured maui
// server (maui.maui; a bare name is looked up on PATH, then beside the
// clients and in their ../sbin) and the clients where showres is.
func simulator(c Config) *maui.Simulator {
	clients := ""
	if p, err := exec.LookPath(c.Maui.Showres); err == nil {
		clients = filepath.Dir(p)
	}
	server := ""
	if p, err := exec.LookPath(c.Maui.Maui); err == nil {
		server = p
	} else if strings.ContainsRune(c.Maui.Maui, '/') {
		server = c.Maui.Maui // missing: CheckInstall names it
	}
	return maui.NewSimulator(maui.SimulatorConfig{BinDir: clients, Server: server,
		WorkDir: filepath.Join(c.StateDir, "maui-sim"), SiteConfig: filepath.Join(c.Maui.Home, "maui.cfg"),
		Zone: c.mauiZone()})
}

func builtinEngine(c Config) agent.BuiltinEngine {
	sp, _ := c.sitePolicy() // Validate reported any error
	e := agent.BuiltinEngine{Horizon: c.Horizon, Policy: sp.Policy, Unmodelled: sp.Unmodelled, Pricing: c.pricing()}
	if sp.Policy.Fairshare != nil && !c.simulated() {
		e.Fairshare = fairshareSource(c)
	}
	return e
}

// agentMetrics registers the agent's metrics on a fresh registry.
func agentMetrics() (*metrics.Agent, *prometheus.Registry) {
	reg := metrics.NewRegistry()
	m := metrics.NewAgent(reg)
	m.SetVersion(version.String())
	return m, reg
}

// reserver is the site's reservation backend: Maui setres/showres/
// releaseres through the Maui adapter, run directly (never a shell) with
// MAUIHOMEDIR set so the clients find the server.
func reserver(c Config) (agent.Reserver, error) {
	if c.simulated() {
		return simulatedReserver(c)
	}
	if c.slurmBackend() {
		return slurmSite(c), nil
	}
	return mauiReserver(c)
}

func mauiReserver(c Config) (agent.MauiReserver, error) {
	loc, err := time.LoadLocation(c.Maui.Timezone)
	if err != nil {
		return agent.MauiReserver{}, cli.Usagef("maui.timezone %q: %v", c.Maui.Timezone, err)
	}
	run := maui.NewExecRunner(maui.ExecConfig{HomeDir: c.Maui.Home, Timeout: c.Maui.CommandTimeout})
	return agent.MauiReserver{Runner: mauiPaths{run, c.Maui},
		Config: maui.ClientConfig{Prefix: c.Reservations.Prefix, Location: loc}}, nil
}

// mauiPaths runs the configured path of each Maui client command.
type mauiPaths struct {
	r   maui.Runner
	cfg MauiConfig
}

func (m mauiPaths) Run(ctx context.Context, name string, args ...string) (maui.Result, error) {
	switch name {
	case "setres":
		name = m.cfg.Setres
	case "showres":
		name = m.cfg.Showres
	case "releaseres":
		name = m.cfg.Releaseres
	case "diagnose":
		name = m.cfg.diagnose()
	case "showq":
		name = m.cfg.besideShowres("showq")
	}
	return m.r.Run(ctx, name, args...)
}

// sources are the Torque event sources: tailers of server_logs and
// accounting (positions under state_dir) and, when configured, the
// scheduler-notification listener. Each hands its events to the agent.
func sources(c Config, a *agent.Agent, log zerolog.Logger, met *metrics.Agent) ([]agent.Source, error) {
	if c.simulated() || c.slurmBackend() {
		return nil, nil // no pbs_server logs: the refresh drives the forecasts
	}
	loc, err := time.LoadLocation(c.Torque.Timezone)
	if err != nil {
		return nil, cli.Usagef("torque.timezone %q: %v", c.Torque.Timezone, err)
	}
	var out []agent.Source
	for _, k := range []struct {
		kind torque.LogKind
		dir  string
	}{{torque.ServerLog, c.serverLogs()}, {torque.AccountingLog, c.accountingDir()}} {
		kind := k.kind
		t, err := torque.NewTailer(torque.TailerConfig{Kind: kind, Dir: k.dir,
			Positions: filepath.Join(c.StateDir, kind.String()+".positions"), Start: tail.StartSavedOrEnd, Location: loc,
			OnReject: func(path string, off int64, _ string, err error) {
				met.LineRejected(map[torque.LogKind]string{torque.ServerLog: agent.SourceServerLog, torque.AccountingLog: agent.SourceAccounting}[kind])
				log.Warn().Str("file", path).Int64("offset", off).Err(err).Msg("log line rejected")
			},
			OnPositionsReset: func(keptAs string, err error) {
				log.Warn().Err(err).Str("kept_as", keptAs).Msg("positions file unusable: kept aside, reading the logs from their end")
			}}, a.TorqueHandler())
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if c.Torque.SchedulerListen != "" {
		server := c.Torque.Server
		if server == "" {
			server = "127.0.0.1"
		}
		l, err := torque.NewListener(torque.ListenerConfig{Addr: c.Torque.SchedulerListen, Servers: []string{server}}, a.TorqueHandler())
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// diagnose is maui.diagnose, or diagnose next to showres.
func (m MauiConfig) diagnose() string {
	if m.Diagnose != "" {
		return m.Diagnose
	}
	return m.besideShowres("diagnose")
}

// besideShowres is the Maui client name in showres' directory (or the
// bare name, looked up on PATH, when showres is).
func (m MauiConfig) besideShowres(name string) string {
	if strings.ContainsRune(m.Showres, '/') {
		return filepath.Join(filepath.Dir(m.Showres), name)
	}
	return name
}

package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/config"
	"lookahead/internal/durfmt"
	"lookahead/internal/natsconn"
	"lookahead/torque"
)

// DefaultConfigFile is where the packaged agent reads its configuration.
const DefaultConfigFile = "/etc/lookahead/agent.yaml"

// Config is the agent's whole configuration as the file, LOOKAHEAD_*
// environment and flags give it (packaging/config/agent.yaml documents
// every key). A key is one tagged field: `mapstructure` names it,
// `default` and `min` give its default and lower bound (internal/config
// refuses unknown keys, durations without a unit and values below min).
type Config struct {
	// file is the config file read (--config), for messages; not a key.
	file string

	Site         string            `mapstructure:"site"`
	LogLevel     string            `mapstructure:"log_level" default:"info"`
	Backend      string            `mapstructure:"backend" default:"torque"`
	Simulated    SimulatedConfig   `mapstructure:"simulated"`
	NATS         natsconn.Config   `mapstructure:"nats"`
	Torque       TorqueConfig      `mapstructure:"torque"`
	Maui         MauiConfig        `mapstructure:"maui"`
	Slurm        SlurmConfig       `mapstructure:"slurm"`
	Engine       string            `mapstructure:"engine" default:"builtin"`
	Policy       string            `mapstructure:"policy" default:"easy"`
	Horizon      time.Duration     `mapstructure:"horizon" default:"24h" min:"1m"`
	Pricing      PricingConfig     `mapstructure:"pricing"`
	Intervals    IntervalsConfig   `mapstructure:"intervals"`
	ForecastTTL  time.Duration     `mapstructure:"forecast_ttl" default:"5m" min:"10s"`
	Reservations ReservationConfig `mapstructure:"reservations"`
	Dispatch     DispatchConfig    `mapstructure:"dispatch"`
	StateDir     string            `mapstructure:"state_dir" default:"/var/lib/lookahead/agent"`
	Metrics      MetricsConfig     `mapstructure:"metrics"`
}

// TorqueConfig is pbs_server on this host.
type TorqueConfig struct {
	PBSHome         string                       `mapstructure:"pbs_home" default:"/var/spool/torque"`
	ServerLogs      string                       `mapstructure:"server_logs"`
	Accounting      string                       `mapstructure:"accounting"`
	Qstat           string                       `mapstructure:"qstat" default:"qstat"`
	Pbsnodes        string                       `mapstructure:"pbsnodes" default:"pbsnodes"`
	Qsub            string                       `mapstructure:"qsub" default:"qsub"`
	Qdel            string                       `mapstructure:"qdel" default:"qdel"`
	PbsMom          string                       `mapstructure:"pbs_mom" default:"pbs_mom"`
	Qhold           string                       `mapstructure:"qhold" default:"qhold"`
	Qrls            string                       `mapstructure:"qrls" default:"qrls"`
	Server          string                       `mapstructure:"server"`
	Timezone        string                       `mapstructure:"timezone" default:"Local"`
	SchedulerListen string                       `mapstructure:"scheduler_listen"`
	CommandTimeout  time.Duration                `mapstructure:"command_timeout" default:"30s" min:"1s"`
	DefaultSpeed    float64                      `mapstructure:"default_speed" default:"1" min:"0.001" max:"1000"`
	Speeds          map[string]float64           `mapstructure:"speeds"`
	Nodes           map[string]torque.NodeConfig `mapstructure:"nodes"`
}

// MauiConfig is Maui on this host.
type MauiConfig struct {
	Home           string        `mapstructure:"home" default:"/usr/local/maui"`
	Setres         string        `mapstructure:"setres" default:"setres"`
	Showres        string        `mapstructure:"showres" default:"showres"`
	Releaseres     string        `mapstructure:"releaseres" default:"releaseres"`
	Diagnose       string        `mapstructure:"diagnose"`
	Maui           string        `mapstructure:"maui" default:"maui"`
	Config         string        `mapstructure:"config"` // site maui.cfg for the built-in engine (sitepolicy.go)
	CommandTimeout time.Duration `mapstructure:"command_timeout" default:"30s" min:"1s"`
	Timezone       string        `mapstructure:"timezone" default:"Local"`
}

// PricingConfig is forecast.Pricing plus the packaged file's shorthand
// queued_factor (time held by queued jobs at base × (1 + queued_factor)).
// Its keys are the JSON names of the forecast package's types.
type PricingConfig struct {
	Base         float64              `json:"base" default:"1"`
	QueuedFactor *float64             `json:"queued_factor"`
	Default      *forecast.Displace   `json:"default"`
	Rules        []forecast.PriceRule `json:"rules"`
}

// IntervalsConfig is the loop's timing.
type IntervalsConfig struct {
	Refresh   time.Duration `mapstructure:"refresh" default:"60s" min:"1s"`
	Debounce  time.Duration `mapstructure:"debounce" default:"2s" min:"1ms"`
	Heartbeat time.Duration `mapstructure:"heartbeat" default:"60s" min:"1s"`
}

// ReservationConfig bounds the reservation service.
type ReservationConfig struct {
	MaxDuration time.Duration `mapstructure:"max_duration" default:"168h" min:"1m"`
	PastGrace   time.Duration `mapstructure:"past_grace" default:"2m"`
	Timeout     time.Duration `mapstructure:"timeout" default:"60s" min:"1s"`
	Prefix      string        `mapstructure:"prefix" default:"la."`
	Slack       time.Duration `mapstructure:"slack" default:"5m"`
	ForeignJobs string        `mapstructure:"foreign_jobs" default:"hold"`
}

// DispatchConfig is how grid jobs' parts run here (docs/dispatch.md):
// off unless enabled, since qsub -P needs the agent's user to be a Torque
// manager.
type DispatchConfig struct {
	Enabled    bool              `mapstructure:"enabled"`
	Users      map[string]string `mapstructure:"users"`
	MinUID     int               `mapstructure:"min_uid" default:"1000" min:"1"`
	OutputDir  string            `mapstructure:"output_dir" default:"{home}"`
	StartSlack time.Duration     `mapstructure:"start_slack" default:"30s"`
}

// MetricsConfig is the Prometheus listener ("" or "off" turns it off, the
// default, as for every listen address: config.ListenAddress; the packaged
// agent.yaml turns it on at 127.0.0.1:9464).
type MetricsConfig struct {
	Listen string `mapstructure:"listen"`
}

// SimulatedConfig is the cluster of backend: simulated, for trying
// lookahead without Torque or Maui: Nodes × PPN processors named
// <site>-n0001…, running the local jobs of an optional SWF trace in the
// built-in simulator; reservations live in the simulation.
type SimulatedConfig struct {
	Nodes    int      `mapstructure:"nodes" default:"4" min:"1"`
	PPN      int      `mapstructure:"ppn" default:"8" min:"1"`
	Speed    float64  `mapstructure:"speed" default:"1" min:"0.001" max:"1000"`
	MemMB    int64    `mapstructure:"mem_mb" min:"0"`
	Features []string `mapstructure:"features"`
	Trace    string   `mapstructure:"trace"`
}

// flagKeys maps command-line flags to config keys.
var flagKeys = map[string]string{
	"site": "site", "log-level": "log_level", "nats-url": "nats.url", "engine": "engine",
	"horizon": "horizon", "metrics-listen": "metrics.listen",
}

// loadConfig reads the config: flags > LOOKAHEAD_* env > file > defaults,
// strictly (internal/config). A missing file is an error only when it was
// named explicitly.
func loadConfig(file string, explicit bool, flags *pflag.FlagSet) (Config, error) {
	c, _, err := readConfig(file, explicit, flags, false)
	return c, err
}

// readConfig is loadConfig that also says where each value came from and,
// with validate, adds Validate's problems to the others.
func readConfig(file string, explicit bool, flags *pflag.FlagSet, validate bool) (Config, *config.Loaded, error) {
	c := Config{file: file}
	spec := config.Spec{File: file, Explicit: explicit, EnvPrefix: "LOOKAHEAD", Flags: flags, FlagKeys: flagKeys}
	if validate {
		spec.Validate = func() error { return c.Validate() }
	}
	l, err := config.Load(viper.New(), &c, spec)
	if err == nil {
		c.Metrics.Listen, _ = config.ListenAddress("metrics.listen", c.Metrics.Listen)
		err = c.absPaths()
	}
	return c, l, err
}

// absPaths makes the directories and files of the config absolute, from
// the directory the agent was started in: Maui's SIMULATION runs in its
// own working directory under state_dir, where a relative path means
// something else (live: state_dir ./alpha-state failed "cannot change
// directory to 'alpha-state/maui-sim/…'").
func (c *Config) absPaths() error {
	for _, p := range []struct {
		key string
		v   *string
	}{{"state_dir", &c.StateDir}, {"torque.pbs_home", &c.Torque.PBSHome}, {"torque.server_logs", &c.Torque.ServerLogs},
		{"torque.accounting", &c.Torque.Accounting}, {"maui.home", &c.Maui.Home}, {"maui.config", &c.Maui.Config},
		{"slurm.conf", &c.Slurm.Conf}, {"slurm.bin", &c.Slurm.Bin}} {
		if *p.v == "" || *p.v == "none" || filepath.IsAbs(*p.v) {
			continue
		}
		abs, err := filepath.Abs(*p.v)
		if err != nil {
			return fmt.Errorf("%s %q: relative, and the current directory is unknown (%w): give an absolute path", p.key, *p.v, err)
		}
		*p.v = abs
	}
	return nil
}

// Validate names every problem with the config and how to fix it.
func (c Config) Validate() error {
	var errs []error
	if _, err := c.agentConfig(); err != nil {
		errs = append(errs, err)
	}
	if _, err := newLogger(io.Discard, c.LogLevel); err != nil {
		errs = append(errs, fmt.Errorf("log_level: %w", err))
	}
	if _, err := config.ListenAddress("metrics.listen", c.Metrics.Listen); err != nil {
		errs = append(errs, err)
	}
	if c.Engine != "builtin" && c.Engine != "maui" {
		errs = append(errs, fmt.Errorf("engine %q: must be builtin or maui", c.Engine))
	}
	errs = append(errs, c.validateBackend()...)
	if c.Engine == "maui" && !filepath.IsAbs(c.Maui.Maui) {
		errs = append(errs, fmt.Errorf("engine maui: maui.maui %q must be the absolute path of the maui binary, with its clients (schedctl, changeparam, showres) beside it", c.Maui.Maui))
	}
	if _, err := sim.ParsePolicy(c.Policy); err != nil {
		errs = append(errs, fmt.Errorf("policy: %w", err))
	} else if _, err := c.sitePolicy(); err != nil {
		key := "maui.config"
		if c.slurmBackend() {
			key = "slurm.conf"
		}
		errs = append(errs, fmt.Errorf("%s: %w", key, err))
	}
	if c.Horizon > time.Duration(forecast.MaxDuration)*time.Second { // the lower bound is the key's min
		errs = append(errs, fmt.Errorf("horizon %s: at most %s (the model's longest duration)", durfmt.Duration(c.Horizon), durfmt.Seconds(forecast.MaxDuration)))
	}
	if c.StateDir == "" && !c.simulated() {
		errs = append(errs, fmt.Errorf("state_dir: empty: the agent keeps its grid parts, holds and the broker's epoch there (default /var/lib/lookahead/agent)"))
	}
	if err := c.pricing().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("pricing: %w", err))
	}
	for _, tz := range []struct{ key, v string }{{"torque.timezone", c.Torque.Timezone}, {"maui.timezone", c.Maui.Timezone}} {
		if _, err := time.LoadLocation(tz.v); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", tz.key, tz.v, err))
		}
	}
	if c.Torque.Server != "" && !torque.ValidServer(c.Torque.Server) {
		errs = append(errs, fmt.Errorf("torque.server %q: must be host or host:port", c.Torque.Server))
	}
	if !forecast.IsPlainName(c.Reservations.Prefix) {
		errs = append(errs, fmt.Errorf("reservations.prefix %q: must be a plain name of 1-%d bytes (the agent knows its reservations by it; default la.)",
			forecast.Clip(c.Reservations.Prefix, forecast.MaxNameBytes), forecast.MaxNameBytes))
	}
	errs = append(errs, c.validateNodes()...)
	errs = append(errs, c.validateSimulated()...)
	if err := c.NATS.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// agentConfig is the agent package's view of the config.
func (c Config) agentConfig() (agent.Config, error) {
	refresh := c.Intervals.Refresh
	if c.Intervals.Heartbeat > 0 && c.Intervals.Heartbeat < refresh {
		refresh = c.Intervals.Heartbeat // every cycle publishes a forecast or a heartbeat
	}
	ac := agent.Config{Site: c.Site, Debounce: c.Intervals.Debounce, Refresh: refresh,
		ForecastTTL: c.ForecastTTL, MaxDuration: c.Reservations.MaxDuration, PastGrace: c.Reservations.PastGrace,
		RequestTimeout: c.Reservations.Timeout, Slack: c.Reservations.Slack, GridState: c.gridState(),
		HoldState: c.stateFile("grid-holds.json"), PartState: c.stateFile("dispatched-parts.json"),
		EpochState: c.stateFile("broker-epoch"), JSDomain: c.NATS.JSDomain, ForeignJobs: c.Reservations.ForeignJobs,
		Dispatch: agent.DispatchConfig{Users: c.Dispatch.Users, MinUID: c.Dispatch.MinUID, OutputDir: c.Dispatch.OutputDir,
			StartSlack: c.Dispatch.StartSlack}}
	if ac.Slack == 0 {
		ac.Slack = -1 // 0 in the file turns the slack off
	}
	ac = ac.WithDefaults()
	if c.Site == "" {
		return ac, fmt.Errorf("site: required; set site: in %s, LOOKAHEAD_SITE or --site", c.fileName())
	}
	return ac, ac.Validate()
}

// fileName is the config file read, else the packaged one.
func (c Config) fileName() string {
	if c.file == "" {
		return DefaultConfigFile
	}
	return c.file
}

func (c Config) pricing() forecast.Pricing {
	p := forecast.DefaultPricing()
	p.Base = c.Pricing.Base
	if c.Pricing.QueuedFactor != nil {
		p.Default = forecast.Displace{Multiplier: 1 + *c.Pricing.QueuedFactor}
	}
	if c.Pricing.Default != nil {
		p.Default = *c.Pricing.Default
	}
	p.Rules = c.Pricing.Rules
	return p
}

func (c Config) serverLogs() string {
	if c.Torque.ServerLogs != "" {
		return c.Torque.ServerLogs
	}
	return filepath.Join(c.Torque.PBSHome, "server_logs")
}

// gridState is where the agent keeps its grid jobs' running parts
// (none for a simulated site: its parts live in the process).
func (c Config) gridState() string {
	if c.simulated() || c.StateDir == "" {
		return ""
	}
	return filepath.Join(c.StateDir, "grid-parts.json")
}

// stateFile is a file of the agent's under state_dir (none for a
// simulated site, whose reservations and parts live in the process).
func (c Config) stateFile(name string) string {
	if c.simulated() || c.StateDir == "" {
		return ""
	}
	return filepath.Join(c.StateDir, name)
}

func (c Config) accountingDir() string {
	if c.Torque.Accounting != "" {
		return c.Torque.Accounting
	}
	return filepath.Join(c.Torque.PBSHome, "server_priv", "accounting")
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"lookahead/agent"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"lookahead/internal/natsconn"
	"lookahead/torque"
)

// DefaultConfigFile is where the packaged agent reads its configuration.
const DefaultConfigFile = "/etc/lookahead/agent.yaml"

// Config is the agent's whole configuration as the file, LOOKAHEAD_*
// environment and flags give it (packaging/config/agent.yaml documents
// every key).
type Config struct {
	Site         string            `mapstructure:"site"`
	LogLevel     string            `mapstructure:"log_level"`
	NATS         natsconn.Config   `mapstructure:"nats"`
	Torque       TorqueConfig      `mapstructure:"torque"`
	Maui         MauiConfig        `mapstructure:"maui"`
	Engine       string            `mapstructure:"engine"`
	Policy       string            `mapstructure:"policy"`
	Horizon      time.Duration     `mapstructure:"horizon"`
	Pricing      PricingConfig     `mapstructure:"-"`
	Intervals    IntervalsConfig   `mapstructure:"intervals"`
	ForecastTTL  time.Duration     `mapstructure:"forecast_ttl"`
	Reservations ReservationConfig `mapstructure:"reservations"`
	StateDir     string            `mapstructure:"state_dir"`
	Metrics      MetricsConfig     `mapstructure:"metrics"`
}

// TorqueConfig is pbs_server on this host.
type TorqueConfig struct {
	PBSHome         string                       `mapstructure:"pbs_home"`
	ServerLogs      string                       `mapstructure:"server_logs"`
	Accounting      string                       `mapstructure:"accounting"`
	Qstat           string                       `mapstructure:"qstat"`
	Pbsnodes        string                       `mapstructure:"pbsnodes"`
	Server          string                       `mapstructure:"server"`
	Timezone        string                       `mapstructure:"timezone"`
	SchedulerListen string                       `mapstructure:"scheduler_listen"`
	CommandTimeout  time.Duration                `mapstructure:"command_timeout"`
	DefaultSpeed    float64                      `mapstructure:"default_speed"`
	Speeds          map[string]float64           `mapstructure:"speeds"`
	Nodes           map[string]torque.NodeConfig `mapstructure:"nodes"`
}

// MauiConfig is Maui on this host.
type MauiConfig struct {
	Home           string        `mapstructure:"home"`
	Setres         string        `mapstructure:"setres"`
	Showres        string        `mapstructure:"showres"`
	Releaseres     string        `mapstructure:"releaseres"`
	Diagnose       string        `mapstructure:"diagnose"`
	Maui           string        `mapstructure:"maui"`
	Config         string        `mapstructure:"config"` // site maui.cfg for the built-in engine (sitepolicy.go)
	CommandTimeout time.Duration `mapstructure:"command_timeout"`
	Timezone       string        `mapstructure:"timezone"`
}

// PricingConfig is forecast.Pricing plus the packaged file's shorthand
// queued_factor (time held by queued jobs at base × (1 + queued_factor)).
type PricingConfig struct {
	Base         float64              `json:"base"`
	QueuedFactor *float64             `json:"queued_factor"`
	Default      *forecast.Displace   `json:"default"`
	Rules        []forecast.PriceRule `json:"rules"`
}

// IntervalsConfig is the loop's timing.
type IntervalsConfig struct {
	Refresh   time.Duration `mapstructure:"refresh"`
	Debounce  time.Duration `mapstructure:"debounce"`
	Heartbeat time.Duration `mapstructure:"heartbeat"`
}

// ReservationConfig bounds the reservation service.
type ReservationConfig struct {
	MaxDuration time.Duration `mapstructure:"max_duration"`
	PastGrace   time.Duration `mapstructure:"past_grace"`
	Timeout     time.Duration `mapstructure:"timeout"`
	Prefix      string        `mapstructure:"prefix"`
}

// MetricsConfig is the Prometheus listener ("" turns it off).
type MetricsConfig struct {
	Listen string `mapstructure:"listen"`
}

func setDefaults(v *viper.Viper) {
	for k, val := range map[string]any{
		"site": "", "log_level": "info",
		"nats.url": "nats://127.0.0.1:4222", "nats.name": "", "nats.creds": "", "nats.nkey_seed": "",
		"nats.user": "", "nats.password": "", "nats.token": "", "nats.tls_ca": "", "nats.tls_cert": "",
		"nats.tls_key": "", "nats.connect_timeout": "5s",
		"torque.pbs_home": "/var/spool/torque", "torque.server_logs": "", "torque.accounting": "",
		"torque.qstat": "qstat", "torque.pbsnodes": "pbsnodes", "torque.server": "", "torque.timezone": "Local",
		"torque.scheduler_listen": "", "torque.command_timeout": "30s", "torque.default_speed": 1.0,
		"maui.home": "/usr/local/maui", "maui.setres": "setres", "maui.showres": "showres",
		"maui.releaseres": "releaseres", "maui.diagnose": "", "maui.maui": "maui", "maui.config": "", "maui.command_timeout": "30s", "maui.timezone": "Local",
		"engine": "builtin", "policy": "easy", "horizon": "24h", "pricing.base": 1.0,
		"intervals.refresh": "60s", "intervals.debounce": "2s", "intervals.heartbeat": "60s",
		"forecast_ttl": "5m", "reservations.max_duration": "168h", "reservations.past_grace": "2m",
		"reservations.timeout": "60s", "reservations.prefix": "la.",
		"state_dir": "/var/lib/lookahead/agent", "metrics.listen": "127.0.0.1:9464",
	} {
		v.SetDefault(k, val)
	}
}

// flagKeys maps command-line flags to config keys.
var flagKeys = map[string]string{
	"site": "site", "log-level": "log_level", "nats-url": "nats.url", "engine": "engine",
	"horizon": "horizon", "metrics-listen": "metrics.listen",
}

// loadConfig reads the config: flags > LOOKAHEAD_* env > file > defaults.
// A missing file is an error only when it was named explicitly.
func loadConfig(file string, explicit bool, flags *pflag.FlagSet) (Config, error) {
	v := viper.New()
	setDefaults(v)
	v.SetEnvPrefix("LOOKAHEAD")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	v.SetConfigFile(file)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		var notFound *os.PathError
		if explicit || !errors.As(err, &notFound) {
			return Config{}, fmt.Errorf("config file %s: %w", file, err)
		}
	}
	for flag, key := range flagKeys {
		if f := flags.Lookup(flag); f != nil {
			if err := v.BindPFlag(key, f); err != nil {
				return Config{}, err
			}
		}
	}
	var c Config
	if err := v.Unmarshal(&c); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", file, err)
	}
	// Pricing is forecast.Pricing, whose keys are its JSON names.
	raw, err := json.Marshal(v.Get("pricing"))
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		err = dec.Decode(&c.Pricing)
	}
	if err != nil {
		return Config{}, fmt.Errorf("config %s: pricing: %w", file, err)
	}
	return c, nil
}

// Validate names every problem with the config and how to fix it.
func (c Config) Validate() error {
	var errs []error
	if _, err := c.agentConfig(); err != nil {
		errs = append(errs, err)
	}
	if c.Engine != "builtin" && c.Engine != "maui" {
		errs = append(errs, fmt.Errorf("engine %q: must be builtin or maui", c.Engine))
	}
	if c.Engine == "maui" && !filepath.IsAbs(c.Maui.Maui) {
		errs = append(errs, fmt.Errorf("engine maui: maui.maui %q must be the absolute path of the maui binary, with its clients (schedctl, changeparam, showres) beside it", c.Maui.Maui))
	}
	if _, err := sim.ParsePolicy(c.Policy); err != nil {
		errs = append(errs, fmt.Errorf("policy: %w", err))
	} else if _, err := c.sitePolicy(); err != nil {
		errs = append(errs, fmt.Errorf("maui.config: %w", err))
	}
	if c.Horizon <= 0 {
		errs = append(errs, fmt.Errorf("horizon %v: must be > 0 (e.g. 24h)", c.Horizon))
	}
	if err := c.pricing().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("pricing: %w", err))
	}
	for _, tz := range []struct{ key, v string }{{"torque.timezone", c.Torque.Timezone}, {"maui.timezone", c.Maui.Timezone}} {
		if _, err := time.LoadLocation(tz.v); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", tz.key, tz.v, err))
		}
	}
	if c.Reservations.Prefix != "" && !forecast.IsPlainName(c.Reservations.Prefix) {
		errs = append(errs, fmt.Errorf("reservations.prefix %q: must be a plain name", c.Reservations.Prefix))
	}
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
		RequestTimeout: c.Reservations.Timeout}.WithDefaults()
	if c.Site == "" {
		return ac, fmt.Errorf("site: required; set site: in %s, LOOKAHEAD_SITE or --site", DefaultConfigFile)
	}
	return ac, ac.Validate()
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

func (c Config) accountingDir() string {
	if c.Torque.Accounting != "" {
		return c.Torque.Accounting
	}
	return filepath.Join(c.Torque.PBSHome, "server_priv", "accounting")
}

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/internal/cli"
	"lookahead/internal/natsconn"
)

// DefaultConfigFile is read when --config is not given; a missing default
// file is not an error (defaults apply).
const DefaultConfigFile = "/etc/lookahead/broker.yaml"

// Config is the broker's whole configuration, as broker.yaml spells it.
type Config struct {
	LogLevel string          `mapstructure:"log_level" json:"log_level"`
	NATS     natsconn.Config `mapstructure:"nats" json:"nats"`
	Planning struct {
		Cycle          time.Duration `mapstructure:"cycle" json:"cycle"`
		Debounce       time.Duration `mapstructure:"debounce" json:"debounce"`
		CommitLead     time.Duration `mapstructure:"commit_lead" json:"commit_lead"`
		ReserveTimeout time.Duration `mapstructure:"reserve_timeout" json:"reserve_timeout"`
		SiteTTL        time.Duration `mapstructure:"site_ttl" json:"site_ttl"`
		StartMargin    time.Duration `mapstructure:"start_margin" json:"start_margin"`
		Tiers          []float64     `mapstructure:"tiers" json:"tiers,omitempty"`
		MultiSite      float64       `mapstructure:"multi_site_factor" json:"multi_site_factor"`
		StagingDelay   time.Duration `mapstructure:"staging_delay" json:"staging_delay"`
		MaxClockSkew   time.Duration `mapstructure:"max_clock_skew" json:"max_clock_skew"`
	} `mapstructure:"planning" json:"planning"`
	Jobs struct {
		MaxWalltime         time.Duration `mapstructure:"max_walltime" json:"max_walltime"`
		MaxActivePerUser    int           `mapstructure:"max_active_per_user" json:"max_active_per_user"`
		MaxActivePerAccount int           `mapstructure:"max_active_per_account" json:"max_active_per_account"`
		Retain              time.Duration `mapstructure:"retain" json:"retain"`
		SnapshotInterval    time.Duration `mapstructure:"snapshot_interval" json:"snapshot_interval"`
	} `mapstructure:"jobs" json:"jobs"`
	Budgets    broker.Budgets `mapstructure:"budgets" json:"budgets"`
	Identities []Identity     `mapstructure:"identities" json:"identities"`
	Operators  []string       `mapstructure:"operators" json:"operators"`
	StateDir   string         `mapstructure:"state_dir" json:"state_dir"`
	Replicas   int            `mapstructure:"replicas" json:"replicas"`
	Metrics    struct {
		Listen string `mapstructure:"listen" json:"listen"`
	} `mapstructure:"metrics" json:"metrics"`
}

// Identity says which grid users and accounts a NATS user may submit for.
type Identity struct {
	NATSUser string   `mapstructure:"nats_user" json:"nats_user"`
	Users    []string `mapstructure:"users" json:"users"`
	Accounts []string `mapstructure:"accounts" json:"accounts"`
}

func setDefaults(v *viper.Viper) {
	v.SetDefault("log_level", "info")
	v.SetDefault("nats.url", "nats://127.0.0.1:4222")
	v.SetDefault("nats.name", "lookahead-broker")
	v.SetDefault("nats.connect_timeout", "5s")
	v.SetDefault("planning.cycle", "30s")
	v.SetDefault("planning.debounce", "1s")
	v.SetDefault("planning.commit_lead", "10m")
	v.SetDefault("planning.reserve_timeout", "30s")
	v.SetDefault("planning.site_ttl", "5m")
	v.SetDefault("planning.start_margin", "30s")
	v.SetDefault("planning.multi_site_factor", 1.0)
	v.SetDefault("planning.max_clock_skew", "1m")
	v.SetDefault("jobs.max_walltime", "168h")
	v.SetDefault("jobs.max_active_per_user", 1000)
	v.SetDefault("jobs.max_active_per_account", 5000)
	v.SetDefault("jobs.retain", "168h")
	v.SetDefault("jobs.snapshot_interval", "1h")
	v.SetDefault("replicas", 1)
	v.SetDefault("state_dir", "/var/lib/lookahead/broker")
	v.SetDefault("metrics.listen", "127.0.0.1:9465")
}

// addConfigFlags adds the flags that override config keys.
func addConfigFlags(fs *pflag.FlagSet) {
	fs.String("config", "", "config file (default "+DefaultConfigFile+" when it exists)")
	fs.String("log-level", "", "log level: debug, info, warn, error")
	fs.String("nats-url", "", "NATS server URL")
	fs.Duration("cycle", 0, "planning cycle length")
	fs.Duration("commit-lead", 0, "reserve jobs planned to start within this lead time")
	fs.Duration("site-ttl", 0, "a site silent longer than this is stale")
	fs.String("metrics-listen", "", `metrics/health listener address ("" keeps the config's, "off" disables)`)
}

var flagKeys = map[string]string{
	"log-level": "log_level", "nats-url": "nats.url", "cycle": "planning.cycle",
	"commit-lead": "planning.commit_lead", "site-ttl": "planning.site_ttl", "metrics-listen": "metrics.listen",
}

// loadConfig reads flags > LOOKAHEAD_ env > file > defaults into a
// validated Config.
func loadConfig(fs *pflag.FlagSet) (Config, error) {
	v := viper.New()
	setDefaults(v)
	v.SetEnvPrefix("LOOKAHEAD")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	for flag, key := range flagKeys {
		if f := fs.Lookup(flag); f != nil && f.Changed {
			v.Set(key, f.Value.String())
		}
	}
	if err := readFile(v, fs); err != nil {
		return Config{}, err
	}
	var c Config
	if err := v.Unmarshal(&c); err != nil {
		return Config{}, cli.Usagef("broker config: %w", err)
	}
	if c.Metrics.Listen == "off" {
		c.Metrics.Listen = ""
	}
	if err := c.Validate(); err != nil {
		return Config{}, cli.Usagef("broker config: %w", err)
	}
	return c, nil
}

func readFile(v *viper.Viper, fs *pflag.FlagSet) error {
	path, _ := fs.GetString("config")
	explicit := path != ""
	if !explicit {
		path = DefaultConfigFile
	}
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	err := v.ReadInConfig()
	if err == nil {
		return nil
	}
	if !explicit && errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return cli.Usagef("read config %s: %w", path, err)
}

// Validate checks the config and names the key that is wrong.
func (c Config) Validate() error {
	if err := c.NATS.Validate(); err != nil {
		return err
	}
	if c.Planning.Cycle <= 0 {
		return fmt.Errorf("planning.cycle: %v, must be > 0", c.Planning.Cycle)
	}
	if c.Planning.SiteTTL <= 0 || c.Planning.ReserveTimeout <= 0 {
		return fmt.Errorf("planning.site_ttl and planning.reserve_timeout must be > 0")
	}
	if c.Planning.MaxClockSkew <= 0 || c.Jobs.Retain <= 0 || c.Jobs.SnapshotInterval <= 0 {
		return fmt.Errorf("planning.max_clock_skew, jobs.retain and jobs.snapshot_interval must be > 0")
	}
	if c.Jobs.MaxActivePerUser < 0 || c.Jobs.MaxActivePerAccount < 0 {
		return fmt.Errorf("jobs.max_active_per_user and jobs.max_active_per_account must be >= 0 (0: no bound)")
	}
	for i, op := range c.Operators {
		if !forecast.IsPlainName(op) {
			return fmt.Errorf("operators[%d] %q: must be a plain name", i, op)
		}
	}
	if c.Planning.MultiSite < 1 {
		return fmt.Errorf("planning.multi_site_factor: %v, must be >= 1", c.Planning.MultiSite)
	}
	for i, id := range c.Identities {
		if id.NATSUser != "*" && !forecast.IsPlainName(id.NATSUser) {
			return fmt.Errorf("identities[%d].nats_user %q: must be a plain name or *", i, id.NATSUser)
		}
		for _, n := range append(append([]string{}, id.Users...), id.Accounts...) {
			if n != "*" && !forecast.IsPlainName(n) {
				return fmt.Errorf("identities[%d]: %q is not a plain name or *", i, n)
			}
		}
	}
	return c.Budgets.Validate()
}

// Policy is the submission policy the config describes. The identity map
// is never nil here: NATS users not listed are refused.
func (c Config) Policy() broker.Policy {
	p := broker.Policy{MaxWalltime: int64(c.Jobs.MaxWalltime / time.Second), Budgets: c.Budgets,
		Identities: map[string]broker.Allowed{}, Operators: c.Operators,
		MaxActivePerUser: c.Jobs.MaxActivePerUser, MaxActivePerAccount: c.Jobs.MaxActivePerAccount}
	for _, id := range c.Identities {
		p.Identities[id.NATSUser] = broker.Allowed{Users: id.Users, Accounts: id.Accounts}
	}
	return p
}

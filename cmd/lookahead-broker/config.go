package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/broker/coalloc"
	"lookahead/broker/web"
	"lookahead/forecast"
	"lookahead/internal/cli"
	"lookahead/internal/config"
	"lookahead/internal/natsconn"
)

// DefaultConfigFile is read when --config is not given; a missing default
// file is not an error (defaults apply).
const DefaultConfigFile = "/etc/lookahead/broker.yaml"

// Config is the broker's whole configuration, as broker.yaml spells it.
// A key is one tagged field: `mapstructure` names it, `default` and `min`
// give its default and lower bound (internal/config refuses unknown keys,
// durations without a unit and values below min).
type Config struct {
	LogLevel string          `mapstructure:"log_level" json:"log_level" default:"info"`
	NATS     natsconn.Config `mapstructure:"nats" json:"nats"`
	Planning struct {
		Cycle          time.Duration `mapstructure:"cycle" json:"cycle" default:"30s" min:"1s"`
		Debounce       time.Duration `mapstructure:"debounce" json:"debounce" default:"1s" min:"1ms"`
		CommitLead     time.Duration `mapstructure:"commit_lead" json:"commit_lead" default:"10m" min:"1s"`
		ReserveTimeout time.Duration `mapstructure:"reserve_timeout" json:"reserve_timeout" default:"30s" min:"1s"`
		SiteTTL        time.Duration `mapstructure:"site_ttl" json:"site_ttl" default:"5m" min:"10s"`
		StartMargin    time.Duration `mapstructure:"start_margin" json:"start_margin" default:"30s" min:"1s"`
		StartGrace     time.Duration `mapstructure:"start_grace" json:"start_grace" default:"2m" min:"1s"`
		Tiers          []float64     `mapstructure:"tiers" json:"tiers,omitempty"`
		MultiSite      float64       `mapstructure:"multi_site_factor" json:"multi_site_factor" default:"1" min:"1" max:"100"`
		Criterion      string        `mapstructure:"criterion" json:"criterion" default:"free-first"`
		Tolerance      float64       `mapstructure:"tolerance" json:"tolerance" default:"0.5" min:"0"`
		FreeTolerance  float64       `mapstructure:"free_tolerance" json:"free_tolerance" default:"2" min:"0"`
		// SplitBacklog: a job spans sites only when the time it saves
		// outweighs what the multi-site factor's waste delays the grid's
		// backlog, times this (coalloc.Options.SplitBacklog; 0: off, the
		// default).
		SplitBacklog float64 `mapstructure:"split_backlog" json:"split_backlog" default:"0" min:"0"`
		// FreeWindow is what free_tolerance counts from: each-cycle or
		// since-submit (coalloc.Options.FreeWindow).
		FreeWindow string `mapstructure:"free_window" json:"free_window" default:"each-cycle"`
		Order      string `mapstructure:"order" json:"order" default:"fcfs"`
		// Aging is order aging's rate: the wait one credit per CPU-hour
		// of max_price is worth (required with it, refused without).
		Aging        time.Duration `mapstructure:"aging" json:"aging"`
		StagingDelay time.Duration `mapstructure:"staging_delay" json:"staging_delay"`
		MaxClockSkew time.Duration `mapstructure:"max_clock_skew" json:"max_clock_skew" default:"1m" min:"1s"`
	} `mapstructure:"planning" json:"planning"`
	Jobs struct {
		MaxWalltime         time.Duration `mapstructure:"max_walltime" json:"max_walltime" default:"168h" min:"1s"`
		MaxActivePerUser    int           `mapstructure:"max_active_per_user" json:"max_active_per_user" default:"1000" min:"0"`
		MaxActivePerAccount int           `mapstructure:"max_active_per_account" json:"max_active_per_account" default:"5000" min:"0"`
		Retain              time.Duration `mapstructure:"retain" json:"retain" default:"168h" min:"1m"`
		SnapshotInterval    time.Duration `mapstructure:"snapshot_interval" json:"snapshot_interval" default:"1h" min:"1s"`
	} `mapstructure:"jobs" json:"jobs"`
	Budgets    broker.Budgets `mapstructure:"budgets" json:"budgets"`
	Identities []Identity     `mapstructure:"identities" json:"identities"`
	Operators  []string       `mapstructure:"operators" json:"operators"`
	StateDir   string         `mapstructure:"state_dir" json:"state_dir" default:"/var/lib/lookahead/broker"`
	// Replicas of every stream and bucket: at most 5, JetStream's limit.
	Replicas int `mapstructure:"replicas" json:"replicas" default:"1" min:"1" max:"5"`
	// Leadership is the active/standby lease (docs/broker.md).
	Leadership struct {
		LeaseTTL time.Duration `mapstructure:"lease_ttl" json:"lease_ttl" default:"10s" min:"3s"`
		// Name is this broker's name in the lease, the audit trail and
		// its requests to the sites; distinct per host.
		Name string `mapstructure:"name" json:"name" default:"broker"`
	} `mapstructure:"leadership" json:"leadership"`
	Metrics struct {
		// Listen is the metrics/health listener; "" (the default) or
		// "off" turns it off. The packaged broker.yaml sets 127.0.0.1:9465.
		Listen string `mapstructure:"listen" json:"listen"`
	} `mapstructure:"metrics" json:"metrics"`
	Web WebConfig `mapstructure:"web" json:"web"`
}

// WebConfig is the operators' web view (broker/web): off by default.
type WebConfig struct {
	// Listen is the page's address; "" (the default) or "off" turns it
	// off. Beyond loopback it needs TokenFile.
	Listen string `mapstructure:"listen" json:"listen"`
	// TokenFile holds the operators' token (mode 0600 or stricter).
	TokenFile string `mapstructure:"token_file" json:"token_file"`
	// TLSCertFile and TLSKeyFile, both or neither, serve HTTPS.
	TLSCertFile string `mapstructure:"tls_cert_file" json:"tls_cert_file"`
	TLSKeyFile  string `mapstructure:"tls_key_file" json:"tls_key_file"`
}

// Identity says which grid users and accounts a NATS user may submit for.
type Identity struct {
	NATSUser string   `mapstructure:"nats_user" json:"nats_user"`
	Users    []string `mapstructure:"users" json:"users"`
	Accounts []string `mapstructure:"accounts" json:"accounts"`
}

// addGlobalFlags adds the flags every command takes (each reads the
// configuration): persistent on the root, shown as global flags, as the
// agent's --config, --site, --log-level and --nats-url.
func addGlobalFlags(pf *pflag.FlagSet) {
	pf.String("config", "", "config file (default "+DefaultConfigFile+" when it exists)")
	pf.String("log-level", "", "log level: debug, info, warn, error (config key log_level)")
	pf.String("nats-url", "", "NATS server URL (config key nats.url)")
}

// addConfigFlags adds the planning flags that override config keys, on
// the commands that show or check them.
func addConfigFlags(fs *pflag.FlagSet) {
	fs.Duration("cycle", 0, "planning cycle length, e.g. 30s (config key planning.cycle)")
	fs.Duration("commit-lead", 0, "reserve jobs planned to start within this lead time, e.g. 10m (config key planning.commit_lead)")
	fs.Duration("site-ttl", 0, "a site silent longer than this is stale, e.g. 5m (config key planning.site_ttl)")
	fs.String("metrics-listen", "", `metrics/health listener address, "off" disables (config key metrics.listen)`)
	fs.String("web-listen", "", `operators' web view address, e.g. 127.0.0.1:9466; "off" disables (config key web.listen)`)
}

var flagKeys = map[string]string{
	"log-level": "log_level", "nats-url": "nats.url", "cycle": "planning.cycle",
	"commit-lead": "planning.commit_lead", "site-ttl": "planning.site_ttl", "metrics-listen": "metrics.listen",
	"web-listen": "web.listen",
}

// loadConfig reads flags > LOOKAHEAD_ env > file > defaults into a
// validated Config; every problem is reported at once, naming the key and
// where it was set (file:line, variable or flag). Its warnings (a
// LOOKAHEAD_* variable that sets no key, a policy that refuses everyone)
// are told by run (in its log), config and check only, not by every
// command that reads the configuration.
func loadConfig(fs *pflag.FlagSet) (Config, error) {
	c, _, err := readConfig(fs)
	return c, err
}

// readConfig is loadConfig that also says where each value came from.
func readConfig(fs *pflag.FlagSet) (Config, *config.Loaded, error) {
	var c Config
	path, _ := fs.GetString("config")
	spec := config.Spec{File: path, Explicit: path != "", EnvPrefix: "LOOKAHEAD", Flags: fs, FlagKeys: flagKeys,
		Validate: func() error { return c.Validate() }}
	if path == "" {
		spec.File = DefaultConfigFile
	}
	l, err := config.Load(viper.New(), &c, spec)
	if err != nil {
		return Config{}, l, cli.UsageError{Err: err}
	}
	c.Metrics.Listen, _ = config.ListenAddress("metrics.listen", c.Metrics.Listen)
	c.Web.Listen, _ = config.ListenAddress("web.listen", c.Web.Listen)
	if c.NATS.Name == "" {
		c.NATS.Name = "lookahead-broker"
	}
	l.Warnings = append(l.Warnings, c.refusesEveryone()...)
	return c, l, nil
}

// refusesEveryone warns of a policy under which no submission can pass
// (the packaged file's, until the operator says who may submit).
func (c Config) refusesEveryone() []string {
	var out []string
	if len(c.Identities) == 0 {
		out = append(out, "identities is empty: every submission is refused (NATS user ... may not submit grid jobs); list who may submit for whom (docs/quickstart.md)")
	}
	if d := c.Budgets.Default; d != nil && *d == 0 && len(c.Budgets.Accounts) == 0 && len(c.Budgets.Users) == 0 {
		out = append(out, "budgets.default_budget is 0 and no user or account is listed: every submission is over budget")
	}
	return out
}

// Validate checks what the key bounds cannot, naming the key; every
// problem at once.
func (c Config) Validate() error {
	var errs []error
	if lvl, err := zerolog.ParseLevel(c.LogLevel); err != nil || c.LogLevel == "" || lvl > zerolog.ErrorLevel {
		errs = append(errs, fmt.Errorf("log_level %q: must be debug, info, warn or error", c.LogLevel))
	}
	if err := c.NATS.Validate(); err != nil {
		errs = append(errs, err)
	}
	if !forecast.IsPlainName(c.Leadership.Name) {
		errs = append(errs, fmt.Errorf("leadership.name %q: must be a plain name ([A-Za-z0-9_][A-Za-z0-9_.-]{0,63})", c.Leadership.Name))
	}
	if _, err := config.ListenAddress("metrics.listen", c.Metrics.Listen); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Web.validate()...)
	for i, op := range c.Operators {
		if !forecast.IsPlainName(op) {
			errs = append(errs, fmt.Errorf("operators[%d] %q: must be a plain name", i, op))
		}
	}
	for i, id := range c.Identities {
		if id.NATSUser != "*" && !forecast.IsPlainName(id.NATSUser) {
			errs = append(errs, fmt.Errorf("identities[%d].nats_user %q: must be a plain name or *", i, id.NATSUser))
		}
		if len(id.Users) == 0 {
			errs = append(errs, fmt.Errorf("identities[%d].users: empty, so %s may submit for no one: list the grid users it may submit for, or * for any", i, id.NATSUser))
		}
		for _, n := range append(append([]string{}, id.Users...), id.Accounts...) {
			if n != "*" && !forecast.IsPlainName(n) {
				errs = append(errs, fmt.Errorf("identities[%d]: %q is not a plain name or *", i, n))
			}
		}
	}
	if err := c.Budgets.Validate(); err != nil {
		errs = append(errs, err)
	}
	if !forecast.IsCriterion(c.Planning.Criterion) {
		errs = append(errs, fmt.Errorf("planning.criterion %q: must be one of %v", c.Planning.Criterion, forecast.Criteria()))
	}
	if err := client.CheckOrder("planning.order", c.Planning.Order, "planning.aging", c.Planning.Aging); err != nil {
		errs = append(errs, err)
	}
	if t := c.Planning.Tolerance; t > 100 {
		errs = append(errs, fmt.Errorf("planning.tolerance %v: must be at most 100", t))
	}
	if err := coalloc.CheckFreeWindow("planning.free_window", c.Planning.FreeWindow); err != nil {
		errs = append(errs, err)
	}
	if t := c.Planning.FreeTolerance; t > 100 {
		errs = append(errs, fmt.Errorf("planning.free_tolerance %v: must be at most 100", t))
	}
	if b := c.Planning.SplitBacklog; b > 100 {
		errs = append(errs, fmt.Errorf("planning.split_backlog %v: must be at most 100", b))
	}
	for i, t := range c.Planning.Tiers {
		if !(t > 0) { // as lookahead plan --tiers; NaN and Inf never get here (config refuses them)
			errs = append(errs, fmt.Errorf("planning.tiers[%d]: %v, must be a number > 0 (a node speed threshold)", i, t))
		}
	}
	return errors.Join(errs...)
}

// Policy is the submission policy the config describes. The identity map
// is never nil here: NATS users not listed are refused.
func (c Config) Policy() broker.Policy {
	p := broker.Policy{MaxWalltime: int64(c.Jobs.MaxWalltime / time.Second), Budgets: c.Budgets,
		Identities: map[string]broker.Allowed{}, Operators: c.Operators,
		MaxActivePerUser: c.Jobs.MaxActivePerUser, MaxActivePerAccount: c.Jobs.MaxActivePerAccount,
		Criterion: c.Planning.Criterion}
	for _, id := range c.Identities {
		p.Identities[id.NATSUser] = broker.Allowed{Users: id.Users, Accounts: id.Accounts}
	}
	return p
}

// validate checks the web keys: the address, TLS files in pairs, and a
// token beyond loopback (the page shows every user's jobs).
func (w WebConfig) validate() []error {
	var errs []error
	addr, err := config.ListenAddress("web.listen", w.Listen)
	if err != nil {
		return []error{err}
	}
	if (w.TLSCertFile == "") != (w.TLSKeyFile == "") {
		errs = append(errs, errors.New("web.tls_cert_file: set it and web.tls_key_file together, or neither"))
	}
	if addr != "" {
		if err := web.CheckExposure(addr, w.TokenFile != ""); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

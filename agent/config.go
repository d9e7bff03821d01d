package agent

import (
	"errors"
	"fmt"
	"time"

	"lookahead/forecast"
	"lookahead/internal/durfmt"
)

// Config is the agent's behaviour. Zero durations take the defaults below
// (see WithDefaults); Validate says what is wrong in words an admin can act
// on.
type Config struct {
	// Site is this cluster's name on the grid (a plain name).
	Site string
	// Debounce is how long the loop waits after the first event of a
	// burst before it builds a forecast (default 2 s).
	Debounce time.Duration
	// Refresh is the period of the full refresh that runs even without
	// events (default 60 s).
	Refresh time.Duration
	// ForecastTTL is the forecast bucket's TTL: a site silent for that long
	// drops out of planning (default 5 min). The agent re-puts an
	// unchanged forecast after half of it.
	ForecastTTL time.Duration
	// MaxDuration is the longest reservation the site grants (default 7 days).
	MaxDuration time.Duration
	// PastGrace accepts a reserve request whose start passed less than this
	// long ago (planning and transport take time); the reservation then
	// starts now (default 2 min). Older starts are refused as in-past.
	PastGrace time.Duration
	// Slack extends each reservation past the requested end, so that a
	// grid job's part submitted after the reservation started still fits:
	// Maui 3.3.1 starts a job inside a reservation only when its walltime
	// fits in what is left of it (rejection "ReserveTime"). It is cut
	// short where the nodes are not free after the end (default 5 min;
	// negative: none).
	Slack time.Duration
	// BuildTimeout bounds one forecast: snapshot plus engine (default 5 min).
	BuildTimeout time.Duration
	// RequestTimeout bounds one reserve/release/list request (default 60 s).
	RequestTimeout time.Duration
	// Replicas of the forecast bucket and audit stream when the agent
	// creates them (default 1).
	Replicas int
	// JSDomain is the grid's JetStream domain (nats.js_domain, checked
	// there), required behind a site's leaf node; empty: the server's own
	// JetStream.
	JSDomain string
	// Dispatch is how grid jobs' parts run here (see DispatchConfig).
	Dispatch DispatchConfig
	// GridState is a file where the agent keeps the grid jobs whose parts
	// it saw running (gridstate.go), so a part that ended while the agent
	// was down is reported finished at start. Empty: in memory only.
	GridState string
	// HoldState is a file where the agent keeps the grid reservations it
	// made and holds (held.go), so that it re-creates what a scheduler
	// restart lost also after its own restart. Empty: in memory only.
	HoldState string
	// PartState is a file where the agent keeps the parts it dispatched
	// and what it reported of them (partstate.go). Empty: in memory only.
	PartState string
	// EpochState is a file where the agent keeps the highest broker epoch
	// it has seen (epoch.go). Empty: in memory only.
	EpochState string
	// ForeignJobs is what the agent does with a local job that a grid
	// reservation admits but that is not the grid job's part (foreign.go):
	// ForeignHold (the default) puts an operator hold on it while it is
	// queued; ForeignGrace leaves it and only reports it, with when it
	// leaves, so the broker's start grace of the part counts from then.
	ForeignJobs string
}

// Defaults of Config.
const (
	DefaultDebounce       = 2 * time.Second
	DefaultRefresh        = 60 * time.Second
	DefaultForecastTTL    = 5 * time.Minute
	DefaultMaxDuration    = 7 * 24 * time.Hour
	DefaultPastGrace      = 2 * time.Minute
	DefaultSlack          = 5 * time.Minute
	DefaultBuildTimeout   = 5 * time.Minute
	DefaultRequestTimeout = 60 * time.Second
)

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.Debounce, DefaultDebounce)
	def(&c.Refresh, DefaultRefresh)
	def(&c.ForecastTTL, DefaultForecastTTL)
	def(&c.MaxDuration, DefaultMaxDuration)
	def(&c.PastGrace, DefaultPastGrace)
	def(&c.Slack, DefaultSlack)
	def(&c.BuildTimeout, DefaultBuildTimeout)
	def(&c.RequestTimeout, DefaultRequestTimeout)
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	c.Dispatch = c.Dispatch.withDefaults()
	if c.ForeignJobs == "" {
		c.ForeignJobs = ForeignHold
	}
	return c
}

// Validate checks a config (after WithDefaults) and names every problem.
func (c Config) Validate() error {
	var errs []error
	if !forecast.IsPlainName(c.Site) {
		errs = append(errs, fmt.Errorf("site %q: must be a plain name (letters, digits, '_', '.', '-'; not starting with '-' or '.')", c.Site))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"debounce", c.Debounce}, {"refresh", c.Refresh}, {"forecast_ttl", c.ForecastTTL},
		{"max_duration", c.MaxDuration}, {"build_timeout", c.BuildTimeout}, {"request_timeout", c.RequestTimeout}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s: %v, must be > 0", d.name, d.v))
		}
	}
	if c.PastGrace < 0 {
		errs = append(errs, fmt.Errorf("past_grace: %s, must be >= 0", durfmt.Duration(c.PastGrace)))
	}
	if c.ForecastTTL > 0 && c.ForecastTTL < 2*c.Refresh {
		errs = append(errs, fmt.Errorf("forecast_ttl %s: must be at least twice refresh %s, or a live site's forecast expires between refreshes", durfmt.Duration(c.ForecastTTL), durfmt.Duration(c.Refresh)))
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("replicas: %d, must be 1..5", c.Replicas))
	}
	if c.ForeignJobs != ForeignHold && c.ForeignJobs != ForeignGrace {
		errs = append(errs, fmt.Errorf("foreign_jobs %q: must be %s or %s", c.ForeignJobs, ForeignHold, ForeignGrace))
	}
	errs = append(errs, c.Dispatch.validate())
	return errors.Join(errs...)
}

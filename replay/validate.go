package replay

import (
	"errors"
	"fmt"
	"lookahead/broker/coalloc"
	"lookahead/forecast"
	"lookahead/forecast/sim"
	"math"
	"strconv"
	"strings"
)

// ErrScenario marks an invalid scenario; errors from Validate wrap it and
// name the field.
var ErrScenario = errors.New("invalid scenario")

func bad(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrScenario, field, fmt.Sprintf(format, args...))
}

// Defaults used where a scenario leaves a value at zero.
const (
	DefaultForecastPeriod  = 300
	DefaultForecastHorizon = 48 * 3600
	DefaultCycle           = 60
	DefaultSitePolicy      = "easy"
	DefaultPlotLength      = 24 * 3600
)

// WithDefaults returns the scenario with every zero default filled in. It
// does not validate.
func (s Scenario) WithDefaults() Scenario {
	s.Sites = append([]SiteSpec(nil), s.Sites...)
	for i := range s.Sites {
		site := &s.Sites[i]
		if site.PPN == 0 {
			site.PPN = 1
		}
		if site.Speed == 0 && site.Heterogeneity > 0 {
			site.Speed = 1 / site.Heterogeneity
		}
		if site.Speed == 0 {
			site.Speed = 1
		}
		if site.Policy == "" {
			site.Policy = DefaultSitePolicy
		}
		if site.Price == 0 {
			site.Price = 1
		}
		if site.Pricing != nil {
			site.Price = site.Pricing.Base
		}
	}
	if s.Local.WidthRule == "" {
		s.Local.WidthRule = WidthClamp
	}
	if s.Local.TimeScale == 0 {
		s.Local.TimeScale = 1
	}
	if s.Grid.WidthRule == "" {
		s.Grid.WidthRule = WidthClamp
	}
	if s.Grid.Payment.Max == 0 && s.Grid.Payment.Min == 0 {
		s.Grid.Payment = PaymentSpec{Min: 1, Max: 1}
	}
	if s.Forecast.Period == 0 {
		s.Forecast.Period = DefaultForecastPeriod
	}
	if s.Forecast.Horizon == 0 {
		s.Forecast.Horizon = DefaultForecastHorizon
	}
	if s.Broker.Cycle == 0 {
		s.Broker.Cycle = DefaultCycle
	}
	if s.Broker.CommitLead == 0 {
		s.Broker.CommitLead = s.Broker.Cycle
	}
	if s.Broker.MultiSiteFactor == 0 {
		s.Broker.MultiSiteFactor = 1
	}
	if s.Plot.Length == 0 {
		s.Plot.Length = DefaultPlotLength
	}
	if s.Plot.Policy == "" && len(s.Policies) > 0 {
		s.Plot.Policy = s.Policies[0]
	}
	return s
}

// Validate checks a scenario (after WithDefaults) and names the first field
// that is wrong.
func (s Scenario) Validate() error {
	checks := []func() error{s.validateSites, s.validateStreams, s.validateBroker, s.validatePolicies, s.validateSweep}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (s Scenario) validateSites() error {
	if len(s.Sites) == 0 {
		return bad("sites", "at least one site is needed")
	}
	seen := map[string]bool{}
	for i, site := range s.Sites {
		f := "sites[" + strconv.Itoa(i) + "]"
		switch {
		case site.Name == "":
			return bad(f+".name", "empty")
		case !forecast.IsPlainName(site.Name):
			return bad(f+".name", "%q: must be a plain name (letters, digits, _ . -; at most %d bytes), as a site's name in a forecast",
				forecast.Clip(site.Name, forecast.MaxNameBytes), forecast.MaxNameBytes)
		case seen[site.Name]:
			return bad(f+".name", "duplicate site %q", site.Name)
		case site.Nodes <= 0:
			return bad(f+".nodes", "must be positive, got %d", site.Nodes)
		case site.Nodes > forecast.MaxForecastNodes:
			return bad(f+".nodes", "at most %d (a forecast's nodes), got %d", forecast.MaxForecastNodes, site.Nodes)
		case site.PPN <= 0:
			return bad(f+".ppn", "must be positive, got %d", site.PPN)
		case site.PPN > forecast.MaxProcs:
			return bad(f+".ppn", "at most %d, got %d", forecast.MaxProcs, site.PPN)
		case !positive(site.Speed):
			return bad(f+".speed", "must be positive, got %v", site.Speed)
		case !forecast.ValidSpeed(site.Speed): // heterogeneity h sets speed 1/h
			return bad(f+".speed", "%v (from speed or 1/heterogeneity): must lie in [%v, %v]", site.Speed, forecast.MinSpeed, forecast.MaxSpeed)
		case site.Heterogeneity < 0 || math.IsNaN(site.Heterogeneity):
			return bad(f+".heterogeneity", "must be positive, got %v", site.Heterogeneity)
		case !positive(site.Price) && site.Pricing == nil:
			return bad(f+".price", "must be positive, got %v", site.Price)
		}
		if err := site.PricingOrDefault().Validate(); err != nil {
			return bad(f+".pricing", "%v", err)
		}
		if err := checkPolicyName(site.Policy); err != nil {
			return bad(f+".policy", "%v", err)
		}
		seen[site.Name] = true
	}
	return nil
}

func (s Scenario) validateStreams() error {
	if err := checkWidthRule("local", s.Local.MaxWidth, s.Local.WidthRule, s.Local.Jobs, s.Local.Skip); err != nil {
		return err
	}
	if s.Local.TimeScale <= 0 || math.IsNaN(s.Local.TimeScale) {
		return bad("local.time_scale", "must be positive, got %v", s.Local.TimeScale)
	}
	g := s.Grid
	if err := checkWidthRule("grid", g.MaxWidth, g.WidthRule, g.Jobs, g.Skip); err != nil {
		return err
	}
	if g.Share < 0 || g.Share > 1 || math.IsNaN(g.Share) {
		return bad("grid.share", "must be in [0, 1], got %v", g.Share)
	}
	if g.Payment.Min < 0 || g.Payment.Max < g.Payment.Min || math.IsNaN(g.Payment.Min) || math.IsNaN(g.Payment.Max) {
		return bad("grid.payment", "need 0 ≤ min ≤ max, got [%v, %v]", g.Payment.Min, g.Payment.Max)
	}
	if g.MaxSites < 0 {
		return bad("grid.max_sites", "must not be negative")
	}
	if g.Deadline < 0 {
		return bad("grid.deadline", "must not be negative")
	}
	if g.Redraw != nil {
		if err := g.Redraw.check("grid.redraw"); err != nil {
			return err
		}
	}
	if g.Synthetic != nil {
		if err := g.Synthetic.check(); err != nil {
			return err
		}
	}
	hasLocal := s.Local.Trace != ""
	for _, site := range s.Sites {
		hasLocal = hasLocal || site.Trace != ""
	}
	if !hasLocal && g.Trace == "" && g.Synthetic == nil {
		return bad("grid", "no workload: give local.trace, a site trace, grid.trace or grid.synthetic")
	}
	if g.Share > 0 && s.Local.Trace == "" {
		return bad("grid.share", "needs local.trace to take the share from")
	}
	return nil
}

func checkWidthRule(field string, maxWidth int, rule string, jobs, skip int) error {
	if maxWidth < 0 {
		return bad(field+".max_width", "must not be negative")
	}
	if rule != WidthClamp && rule != WidthDrop {
		return bad(field+".width_rule", "%q: want %q or %q", rule, WidthClamp, WidthDrop)
	}
	if jobs < 0 || skip < 0 {
		return bad(field, "jobs and skip must not be negative")
	}
	return nil
}

func (r RedrawSpec) check(field string) error {
	if r.Share < 0 || r.Share > 1 || math.IsNaN(r.Share) {
		return bad(field+".share", "must be in [0, 1], got %v", r.Share)
	}
	if r.Min < 1 || r.Max < r.Min {
		return bad(field, "need 1 ≤ min ≤ max, got [%d, %d]", r.Min, r.Max)
	}
	return nil
}

func (y SyntheticSpec) check() error {
	if y.Jobs <= 0 || y.Jobs > maxSyntheticJobs {
		return bad("grid.synthetic.jobs", "must lie in [1, %d], got %d", maxSyntheticJobs, y.Jobs)
	}
	if y.RunMin <= 0 || y.RunMax < y.RunMin || y.RunMax > forecast.MaxDuration {
		return bad("grid.synthetic", "need 0 < run_min ≤ run_max ≤ %d, got [%d, %d]", forecast.MaxDuration, y.RunMin, y.RunMax)
	}
	return checkMix("grid.synthetic.classes", y.Classes)
}

func checkMix(field string, classes []WidthClass) error {
	if len(classes) == 0 {
		return bad(field, "at least one class is needed")
	}
	sum := 0.0
	for i, c := range classes {
		if c.Min < 1 || c.Max < c.Min {
			return bad(fmt.Sprintf("%s[%d]", field, i), "need 1 ≤ min ≤ max, got [%d, %d]", c.Min, c.Max)
		}
		if c.Share < 0 || math.IsNaN(c.Share) {
			return bad(fmt.Sprintf("%s[%d].share", field, i), "must not be negative")
		}
		sum += c.Share
	}
	if math.Abs(sum-1) > 1e-6 {
		return bad(field, "shares add up to %v, want 1", sum)
	}
	return nil
}

// maxSyntheticJobs bounds a synthetic grid stream (each job is planned).
const maxSyntheticJobs = 1_000_000

func (s Scenario) validateBroker() error {
	b := s.Broker
	switch {
	case s.Forecast.Period <= 0:
		return bad("forecast.period", "must be positive")
	case s.Forecast.Horizon <= 0 || s.Forecast.Horizon.Seconds() > forecast.MaxDuration:
		return bad("forecast.horizon", "must lie in [1, %d] seconds, got %d", forecast.MaxDuration, s.Forecast.Horizon)
	case s.Plot.From < 0 || s.Plot.Length < 0:
		return bad("plot", "from and length must not be negative, got %d and %d", s.Plot.From, s.Plot.Length)
	case b.Cycle <= 0:
		return bad("broker.cycle", "must be positive")
	case b.CommitLead <= 0:
		return bad("broker.commit_lead", "must be positive")
	case b.MultiSiteFactor < 1 || math.IsNaN(b.MultiSiteFactor):
		return bad("broker.multi_site_factor", "must be at least 1, got %v", b.MultiSiteFactor)
	case b.StagingDelay < 0:
		return bad("broker.staging_delay", "must not be negative")
	case b.Order != "" && b.Order != OrderPriority && b.Order != OrderFCFS && b.Order != OrderAging && b.Order != OrderArea:
		return bad("broker.order", "must be %s, %s, %s or %s, got %q", OrderPriority, OrderFCFS, OrderAging, OrderArea, b.Order)
	case b.Aging < 0 || (b.Order != OrderArea && (b.Order == OrderAging) != (b.Aging > 0)):
		return bad("broker.aging", "a positive duration (of waiting per credit of max price) with order %s (per CPU-hour with %s), and only then; got %v", OrderAging, OrderArea, b.Aging)
	case s.Until < 0 || s.DensityHorizon < 0:
		return bad("until", "durations must not be negative")
	}
	if err := coallocOptions(s).Validate(); err != nil {
		return bad("broker", "%v", err)
	}
	return nil
}

func (s Scenario) validatePolicies() error {
	if len(s.Policies) == 0 {
		return bad("policies", "name at least one strategy (%s)", strings.Join(StrategyNames(), ", "))
	}
	seen := map[string]bool{}
	for i, p := range s.Policies {
		name, _ := splitPolicy(p)
		if strings.ContainsAny(p, "[]") && name == p {
			return bad(fmt.Sprintf("policies[%d]", i), "%q: want a strategy name, or one with settings in brackets: name[key=value,...]", p)
		}
		if _, ok := strategies[name]; !ok {
			return bad(fmt.Sprintf("policies[%d]", i), "unknown strategy %q (known: %s; settings of its own as lookahead[order=fcfs,free_tolerance=0.5])", p, strings.Join(StrategyNames(), ", "))
		}
		if v, err := s.forPolicy(p); err != nil {
			return bad(fmt.Sprintf("policies[%d]", i), "%v", err)
		} else if err := v.validateBroker(); err != nil {
			return bad(fmt.Sprintf("policies[%d]", i), "%v", err)
		}
		if seen[p] {
			return bad(fmt.Sprintf("policies[%d]", i), "duplicate strategy %q", p)
		}
		seen[p] = true
	}
	if s.Plot.Policy != "" && !seen[s.Plot.Policy] {
		return bad("plot.policy", "%q is not among the policies", s.Plot.Policy)
	}
	if (seen[NameCheap] || seen[NameCheapSort]) && s.Grid.Deadline == 0 && s.DensityHorizon == 0 {
		return bad("grid.deadline", "the cheap strategy needs a deadline (grid.deadline or density_horizon)")
	}
	return nil
}

func (s Scenario) validateSweep() error {
	w := s.Sweep
	for i, f := range w.MultiSiteFactor {
		if f < 1 || math.IsNaN(f) || f > coalloc.MaxMultiSiteFactor {
			return bad(fmt.Sprintf("sweep.multi_site_factor[%d]", i), "must lie in [1, %v], got %v", coalloc.MaxMultiSiteFactor, f)
		}
	}
	for i, p := range w.SitePolicy {
		if err := checkPolicyName(p); err != nil {
			return bad(fmt.Sprintf("sweep.site_policy[%d]", i), "%v", err)
		}
	}
	for i, hs := range w.Heterogeneity {
		if len(hs) != len(s.Sites) {
			return bad(fmt.Sprintf("sweep.heterogeneity[%d]", i), "has %d factors for %d sites", len(hs), len(s.Sites))
		}
		for _, h := range hs {
			if !positive(h) {
				return bad(fmt.Sprintf("sweep.heterogeneity[%d]", i), "factors must be positive, got %v", h)
			}
		}
	}
	for i, m := range w.Mix {
		if s.Grid.Synthetic == nil {
			return bad("sweep.mix", "needs grid.synthetic")
		}
		if err := checkMix(fmt.Sprintf("sweep.mix[%d]", i), m); err != nil {
			return err
		}
	}
	for i, r := range w.Redraw {
		if r != nil {
			if err := r.check(fmt.Sprintf("sweep.redraw[%d]", i)); err != nil {
				return err
			}
		}
	}
	for i, p := range w.Payment {
		if p.Min < 0 || p.Max < p.Min || math.IsNaN(p.Min) || math.IsNaN(p.Max) {
			return bad(fmt.Sprintf("sweep.payment[%d]", i), "need 0 ≤ min ≤ max, got [%v, %v]", p.Min, p.Max)
		}
	}
	return nil
}

// checkPolicyName accepts the built-in simulator's policies.
func checkPolicyName(p string) error {
	_, err := sim.ParsePolicy(p)
	return err
}

func positive(v float64) bool { return v > 0 && !math.IsNaN(v) && !math.IsInf(v, 0) }

// PricingOrDefault is the site's price list: Pricing when given, else
// forecast.DefaultPricing with Base = Price.
func (s SiteSpec) PricingOrDefault() forecast.Pricing {
	if s.Pricing != nil {
		return *s.Pricing
	}
	p := forecast.DefaultPricing()
	p.Base = s.Price
	return p
}

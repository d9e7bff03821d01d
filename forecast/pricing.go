package forecast

import "fmt"

// Pricing is a site owner's price list, in credits per CPU-hour on the
// reference CPU. Free time costs Base. Time that a queued local job is
// forecast to hold may be offered to grid jobs (which would displace the
// local job) at a higher price: the first Rule that matches the job decides,
// else Default. The cmd layer reads it from YAML or JSON:
//
//	base: 1.0
//	default: {multiplier: 3, per_priority: 0.01, max: 10}
//	rules:
//	  - queue: low          # grid jobs may displace queue low for 2x base
//	    multiplier: 2
//	  - queue: urgent       # ...and never queue urgent
//	    never: true
type Pricing struct {
	Base    float64     `json:"base" yaml:"base"`
	Default Displace    `json:"default" yaml:"default"`
	Rules   []PriceRule `json:"rules,omitempty" yaml:"rules"`
}

// Displace prices the time a queued local job holds: Base × min(Max,
// Multiplier + PerPriority × max(priority, 0)); Max 0 means no cap. Never
// means that time is not offered at all.
type Displace struct {
	Multiplier  float64 `json:"multiplier" yaml:"multiplier"`
	PerPriority float64 `json:"per_priority,omitempty" yaml:"per_priority"`
	Max         float64 `json:"max,omitempty" yaml:"max"`
	Never       bool    `json:"never,omitempty" yaml:"never"`
}

// PriceRule applies its Displace to the queued jobs it matches: every
// non-empty field must equal the job's, and the job's priority must be at
// least MinPriority when that is set.
type PriceRule struct {
	Queue       string `json:"queue,omitempty" yaml:"queue"`
	QOS         string `json:"qos,omitempty" yaml:"qos"`
	User        string `json:"user,omitempty" yaml:"user"`
	Account     string `json:"account,omitempty" yaml:"account"`
	MinPriority *int64 `json:"min_priority,omitempty" yaml:"min_priority"`
	Displace    `yaml:",inline"`
}

// DefaultPricing is used when the owner configured nothing: free time at
// 1 credit per CPU-hour, time held by queued jobs at twice that plus 1 %
// of base per priority point, capped at 10× base.
func DefaultPricing() Pricing {
	return Pricing{Base: 1, Default: Displace{Multiplier: 2, PerPriority: 0.01, Max: 10}}
}

// Validate checks that prices are numbers >= 0 and that displacing a local
// job never costs less than free time (multipliers >= 1, caps >= the
// multiplier).
func (p Pricing) Validate() error {
	if !goodPrice(p.Base) {
		return invalid("pricing base %v: must be a number in [0, %v]", p.Base, MaxPrice)
	}
	if err := p.Default.validate(); err != nil {
		return fmt.Errorf("pricing default: %w", err)
	}
	for i, r := range p.Rules {
		if err := r.Displace.validate(); err != nil {
			return fmt.Errorf("pricing rules[%d]: %w", i, err)
		}
		for _, f := range [][2]string{{"queue", r.Queue}, {"qos", r.QOS}, {"user", r.User}, {"account", r.Account}} {
			if f[1] != "" && !IsPlainName(f[1]) { // it could never match a job's
				return invalid("pricing rules[%d].%s %q: must be a plain name", i, f[0], clipName(f[1]))
			}
		}
	}
	return nil
}

func (d Displace) validate() error {
	if d.Never {
		return nil
	}
	switch {
	case badFloat(d.Multiplier) || d.Multiplier < 1 || d.Multiplier > MaxPrice:
		return invalid("multiplier %v: must lie in [1, %v] (displacing a local job never costs less than free time)", d.Multiplier, MaxPrice)
	case !goodPrice(d.PerPriority):
		return invalid("per_priority %v: must lie in [0, %v]", d.PerPriority, MaxPrice)
	case !goodPrice(d.Max) || (d.Max > 0 && d.Max < d.Multiplier):
		return invalid("max %v: must be 0 (no cap) or lie in [multiplier %v, %v]", d.Max, d.Multiplier, MaxPrice)
	}
	return nil
}

// Price is what a grid job pays per CPU-hour for time that j is forecast
// to hold; ok is false when that time is not offered: by a never rule, or
// because the price would exceed MaxPrice, which no job may pay. On a
// validated Pricing the arithmetic stays finite (every factor is at most
// MaxPrice, a priority at most 2^63).
func (p Pricing) Price(j LocalJob) (price float64, ok bool) {
	d := p.Default
	for _, r := range p.Rules {
		if r.matches(j) {
			d = r.Displace
			break
		}
	}
	if d.Never {
		return 0, false
	}
	m := d.Multiplier + d.PerPriority*float64(max(j.Priority, 0))
	if d.Max > 0 {
		m = min(m, d.Max)
	}
	price = p.Base * m
	if !goodPrice(price) {
		return 0, false
	}
	return price, true
}

func (r PriceRule) matches(j LocalJob) bool {
	return (r.Queue == "" || r.Queue == j.Queue) &&
		(r.QOS == "" || r.QOS == j.QOS) &&
		(r.User == "" || r.User == j.User) &&
		(r.Account == "" || r.Account == j.Account) &&
		(r.MinPriority == nil || j.Priority >= *r.MinPriority)
}

package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"lookahead/forecast/sim"
)

// SitePolicy is what the built-in engine schedules with: the site's own
// Maui policy read from its maui.cfg, or a named policy where there is
// none. Unmodelled lists the maui.cfg settings the simulator cannot follow;
// the agent says them once, in `lookahead-agent check` and in every
// forecast it publishes (forecast.Forecast.Unmodelled).
type SitePolicy struct {
	Source     string // the maui.cfg read, or "policy <name>"
	Policy     sim.Policy
	Unmodelled []string
}

// LoadSitePolicy reads the site's maui.cfg at path. An empty path, or a
// missing file when required is false (the default location), gives the
// named fallback policy instead; a missing required file, an unreadable
// one or a value the simulator cannot read is an error.
func LoadSitePolicy(path string, required bool, fallback string) (SitePolicy, error) {
	named := func() (SitePolicy, error) {
		p, err := sim.ParsePolicy(fallback)
		if err != nil {
			return SitePolicy{}, fmt.Errorf("policy: %w", err)
		}
		return SitePolicy{Source: "policy " + p.String(), Policy: p}, nil
	}
	if path == "" {
		return named()
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return named()
	}
	if err != nil {
		return SitePolicy{}, fmt.Errorf("site maui.cfg: %w", err)
	}
	defer f.Close()
	mc, err := sim.ReadMauiConfig(f)
	if err != nil {
		return SitePolicy{}, fmt.Errorf("site maui.cfg %s: %w", path, err)
	}
	// the site's Maui runs beside the agent: its standing reservations'
	// windows sit on this host's local time unless the agent is told the
	// site's zone (maui.timezone, which lookahead-agent applies after
	// loading)
	pol := sim.LiveClock(time.Local).Site(mc.Policy)
	return SitePolicy{Source: path, Policy: pol, Unmodelled: mc.Unmodelled}, nil
}

// CheckDetail is what `lookahead-agent check` says about the policy: where
// it comes from and, once, every setting the simulator cannot follow.
func (p SitePolicy) CheckDetail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "built-in engine follows %s", p.Source)
	if len(p.Unmodelled) == 0 {
		if strings.HasPrefix(p.Source, "policy ") {
			b.WriteString(" (no site maui.cfg)")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "; not modelled (%d):", len(p.Unmodelled))
	for _, u := range p.Unmodelled {
		b.WriteString("\n  " + u)
	}
	return b.String()
}

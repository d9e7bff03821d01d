package main

import (
	"path/filepath"
	"time"

	"lookahead/agent"
	"lookahead/forecast/sim"
)

// mauiZone is the site's time zone, maui.timezone: the zone the site's Maui
// runs in, so its standing reservations' windows (SRCFG STARTTIME, DAYS)
// sit on its wall clock. Both engines follow it: the maui engine runs its
// private Maui in it, the built-in engine places the windows in it. The
// default, Local, is this host's zone, the one the Maui beside the agent
// uses. Validate reports a zone that does not load; here it falls back to
// Local.
func (c Config) mauiZone() *time.Location {
	loc, err := time.LoadLocation(c.Maui.Timezone)
	if err != nil {
		return time.Local
	}
	return loc
}

// sitePolicy is the built-in engine's policy: maui.config names the site's
// maui.cfg ("none": the policy key only); unset, <maui.home>/maui.cfg is
// read when it exists — the file the maui engine copies — and the policy
// key is the fallback (always, with the simulated backend, whose site
// runs the policy key).
func (c Config) sitePolicy() (agent.SitePolicy, error) {
	sp, err := c.loadSitePolicy()
	if err == nil && !c.slurmBackend() {
		// a live site runs on the real time in its Maui's zone: the same
		// clock rule as a trace replay (docs/simulator.md, "The wall clock")
		sp.Policy = sim.LiveClock(c.mauiZone()).Site(sp.Policy)
	}
	return sp, err
}

func (c Config) loadSitePolicy() (agent.SitePolicy, error) {
	switch {
	case c.slurmBackend():
		return agent.LoadSlurmPolicy(c.Slurm.Conf)
	case c.Maui.Config == "none" || (c.Maui.Config == "" && c.simulated()):
		return agent.LoadSitePolicy("", false, c.Policy)
	case c.Maui.Config == "":
		return agent.LoadSitePolicy(filepath.Join(c.Maui.Home, "maui.cfg"), false, c.Policy)
	}
	return agent.LoadSitePolicy(c.Maui.Config, true, c.Policy)
}

// checkSitePolicy is `lookahead-agent check`'s line about the built-in
// engine's policy: its source and what of it cannot be modelled.
func checkSitePolicy(c Config) checkResult {
	sp, err := c.sitePolicy()
	if err != nil {
		return checkResult{Name: "site policy", Detail: err.Error(), Fix: "fix the maui.cfg line named, or set maui.config to none to use the policy key"}
	}
	return checkResult{Name: "site policy", OK: true, Detail: sp.CheckDetail()}
}

package main

import (
	"path/filepath"

	"lookahead/agent"
)

// sitePolicy is the built-in engine's policy: maui.config names the site's
// maui.cfg ("none": the policy key only); unset, <maui.home>/maui.cfg is
// read when it exists — the file the maui engine copies — and the policy
// key is the fallback (always, with the simulated backend, whose site
// runs the policy key).
func (c Config) sitePolicy() (agent.SitePolicy, error) {
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

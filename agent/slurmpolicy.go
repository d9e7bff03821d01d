package agent

import (
	"fmt"
	"os"

	"lookahead/slurm"
)

// LoadSlurmPolicy is the built-in engine's policy for a Slurm site, read
// from its slurm.conf (slurm.Conf.Policy): the same SitePolicy a Maui
// site's maui.cfg gives, with what the simulator cannot follow listed.
func LoadSlurmPolicy(path string) (SitePolicy, error) {
	f, err := os.Open(path)
	if err != nil {
		return SitePolicy{}, fmt.Errorf("slurm.conf: %w", err)
	}
	defer f.Close()
	c, err := slurm.ReadConf(f)
	if err != nil {
		return SitePolicy{}, fmt.Errorf("%s: %w", path, err)
	}
	p, notes, err := c.Policy()
	if err != nil {
		return SitePolicy{}, fmt.Errorf("%s: %w", path, err)
	}
	return SitePolicy{Source: path, Policy: p, Unmodelled: notes}, nil
}

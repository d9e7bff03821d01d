package main

import (
	"strings"
	"testing"

	"lookahead/slurm/slurmtest"
)

func TestSlurmBackendConfig(t *testing.T) {
	cfg := writeFile(t, "agent.yaml", "site: sl\nbackend: slurm\nengine: maui\nslurm:\n  conf: /nonexistent/slurm.conf\n  timezone: Nowhere/Else\n")
	_, err := execute(t, "config", "--config", cfg)
	for _, want := range []string{"needs backend torque (a Slurm site has no Maui)", "slurm.timezone", "slurm.conf: open /nonexistent/slurm.conf"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config error %v lacks %q", err, want)
		}
	}
}

// check on a real private Slurm: munge, the clients, the commands that
// change state looked up, root, the site policy from its slurm.conf and
// one forecast.
func TestCheckSlurmSite(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	t.Setenv("SLURM_CONF", "") // the agent passes slurm.conf itself
	cfg := writeFile(t, "agent.yaml", "site: sl\nbackend: slurm\nstate_dir: "+t.TempDir()+"\nslurm:\n  conf: "+c.Conf+"\n")
	byName := runChecks(t, cfg)
	for name, want := range map[string]string{
		"config": "backend slurm", "munge": "credential", "slurm clients": "1 nodes, 1 usable, 0 jobs, 0 reservations",
		"slurm sbatch": "sbatch", "slurm permissions": "root", "site policy": c.Conf, "forecast": "1 nodes",
	} {
		if r := byName[name]; !r.OK || !strings.Contains(r.Detail, want) {
			t.Errorf("%s: %+v, want ok with %q", name, r, want)
		}
	}
	if d := byName["site policy"].Detail; !strings.Contains(d, "bf_interval=5") {
		t.Errorf("site policy does not list what it cannot model: %s", d)
	}
}

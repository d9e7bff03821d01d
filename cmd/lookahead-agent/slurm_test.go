package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"lookahead/slurm"
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

// slurmAgentYAML is an agent.yaml for cluster c with extra lines.
func slurmAgentYAML(t *testing.T, c *slurmtest.Cluster, extra string) string {
	t.Setenv("SLURM_CONF", "") // the agent passes slurm.conf itself
	return writeFile(t, "agent.yaml", "site: sl\nbackend: slurm\nstate_dir: "+t.TempDir()+"\nslurm:\n  conf: "+c.Conf+"\n"+extra)
}

// check on a real private Slurm: munge, slurmctld, the clients, what the
// first grid job needs (cons_tres, the partition, a reservation the agent
// may make, its mapped user), the commands that change state looked up,
// root, the site policy from its slurm.conf and one forecast.
func TestCheckSlurmSite(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 8})
	cfg := slurmAgentYAML(t, c, fmt.Sprintf("dispatch:\n  min_uid: %d\n  users: {alice: %s}\n", c.User2UID(), slurmtest.User2))
	byName := runChecks(t, cfg)
	for name, want := range map[string]string{
		"config": "backend slurm", "munge": "credential", "slurmctld": "UP", "slurm clients": "1 nodes, 1 usable",
		"slurm select type": "select/cons_tres", "slurm partition": "the default partition: batch",
		"slurm reservations": "made and deleted a 1-core reservation on " + c.Node, "dispatch user alice": "→ " + slurmtest.User2,
		"slurm sbatch": "sbatch", "slurm permissions": "root", "site policy": c.Conf, "forecast": "1 nodes",
	} {
		if r := byName[name]; !r.OK || !strings.Contains(r.Detail, want) {
			t.Errorf("%s: %+v, want ok with %q", name, r, want)
		}
	}
	if d := byName["site policy"].Detail; !strings.Contains(d, "bf_interval=5") {
		t.Errorf("site policy does not list what it cannot model: %s", d)
	}
	if r := c.Run("scontrol", "show", "reservation"); !strings.Contains(r.Stdout, "No reservations") {
		t.Errorf("check left a reservation: %s", r.Stdout)
	}
}

// What makes every grid job fail, caught by check on a two-node cluster:
// a partition that does not exist, a mapped user the system does not
// know; and slurmctld down is one quick line, not a minute of timeouts.
func TestCheckSlurmCatchesWhatWillFail(t *testing.T) {
	c := slurmtest.Shared(t, slurmtest.Options{CPUs: 4, Nodes: 2})
	cfg := slurmAgentYAML(t, c, "  partition: nosuch\ndispatch:\n  users: {alice: no-such-user-here}\n")
	byName := runChecks(t, cfg)
	for name, want := range map[string][2]string{
		"slurm partition":     {"slurm.partition nosuch: no such partition (partitions: batch)", "set slurm.partition to one of the cluster's partitions"},
		"dispatch user alice": {"→ no-such-user-here: no such user on this host", "getent passwd no-such-user-here must find it"},
		"slurm reservations":  {"bad_partition", "set slurm.partition"},
	} {
		if r := byName[name]; r.OK || !strings.Contains(r.Detail, want[0]) || !strings.Contains(r.Fix, want[1]) {
			t.Errorf("%s: %+v, want a failure with %q, fix %q", name, r, want[0], want[1])
		}
	}
	if r := byName["slurm clients"]; !r.OK || !strings.Contains(r.Detail, "2 nodes, 2 usable") {
		t.Errorf("slurm clients: %+v", r)
	}

	c.StopController()
	start := time.Now()
	byName = runChecks(t, slurmAgentYAML(t, c, ""))
	took := time.Since(start)
	if r := byName["slurmctld"]; r.OK || !strings.Contains(r.Detail, "is DOWN") || !strings.Contains(r.Fix, "systemctl start slurmctld") {
		t.Errorf("slurmctld down: %+v", r)
	}
	for _, skipped := range []string{"slurm clients", "slurm partition", "slurm reservations", "forecast"} {
		if r, ok := byName[skipped]; ok {
			t.Errorf("%s checked with slurmctld down: %+v", skipped, r)
		}
	}
	t.Logf("check with slurmctld down took %v", took.Round(time.Millisecond))
}

// Under select/linear every core reservation is refused (captured):
// check says what to set.
func TestCheckSelectType(t *testing.T) {
	for file, fix := range map[string]string{"mn-show-config.txt": "", "mn-linear-show-config.txt": "SelectType=select/cons_tres",
		// CR_Core_Memory and Slurm's default memory per job (the node's
		// whole memory): a part planned beside a local job never starts.
		"mn-show-config-core-memory.txt": "set DefMemPerCPU", "mn-show-config-core-memory-defmem.txt": ""} {
		cl := &slurm.Client{Run: &slurm.FixtureRunner{Dir: "../../slurm/testdata", Rules: []slurm.FixtureRule{{Argv: []string{"scontrol", "show", "config"}, File: file}}}}
		r := checkSelectType(context.Background(), cl)
		if r.OK != (fix == "") || !strings.Contains(r.Fix, fix) {
			t.Errorf("%s: %+v", file, r)
		}
	}
}

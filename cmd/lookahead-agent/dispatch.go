package main

import (
	"lookahead/agent"
	"lookahead/torque"
)

// executor runs grid jobs' parts when dispatch is enabled: qsub, qstat
// and qdel run directly (never a shell), or the simulated site.
func executor(c Config) (agent.Executor, error) {
	if !c.Dispatch.Enabled {
		return nil, nil
	}
	if c.simulated() {
		return simulatedSite(c)
	}
	if c.slurmBackend() {
		return slurmSite(c), nil // sbatch --uid as root: docs/security.md
	}
	run := torque.NewExecInputRunner(torque.ExecConfig{Timeout: c.Torque.CommandTimeout})
	return torque.NewBatch(run, torque.BatchConfig{Site: c.Site, Qsub: c.Torque.Qsub, Qdel: c.Torque.Qdel, Qstat: c.Torque.Qstat, Server: c.Torque.Server}), nil
}

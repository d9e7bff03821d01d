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

// holder holds foreign jobs on a Torque site (reservations.foreign_jobs:
// hold): qhold/qrls -h o, run directly. Nil elsewhere: foreign jobs are
// only reported.
func holder(c Config) agent.Holder {
	if c.simulated() || c.slurmBackend() || c.Reservations.ForeignJobs != agent.ForeignHold {
		return nil
	}
	run := torque.NewExecInputRunner(torque.ExecConfig{Timeout: c.Torque.CommandTimeout})
	return torque.NewBatch(run, torque.BatchConfig{Site: c.Site, Qhold: c.Torque.Qhold, Qrls: c.Torque.Qrls, Server: c.Torque.Server})
}

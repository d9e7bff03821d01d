package slurmtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// killStrays kills, by PID, every process still carrying this cluster's
// SLURM_CONF in its environment once the daemons are stopped: slurmstepd
// detaches from slurmd and ignores SIGTERM, so a job that was not
// cancelled in time (a controller that did not answer) would outlive the
// test. Only this cluster's processes match (its slurm.conf path is
// unique); it logs each one, since a stray means the cancel failed.
func (c *Cluster) killStrays() {
	want := []byte("SLURM_CONF=" + c.Conf + "\x00")
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		c.t.Logf("slurmtest: killing stray pid %d (%s)", pid, bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '}))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

package slurmtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// daemon is one foreground daemon started by this package.
type daemon struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// startDaemons starts munged, slurmctld and slurmd in that order, each
// stopped by PID at cleanup, and waits until the node is idle.
func (c *Cluster) startDaemons() error {
	m := filepath.Join(c.Dir, "munge")
	if _, err := c.spawn("munged", "-F", "--socket="+filepath.Join(m, "sock"),
		"--key-file="+filepath.Join(m, "key"), "--log-file="+filepath.Join(m, "log"),
		"--pid-file="+filepath.Join(m, "pid"), "--seed-file="+filepath.Join(m, "seed")); err != nil {
		return err
	}
	if err := c.waitFor("munged's socket", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(m, "sock"))
		return err == nil
	}); err != nil {
		return err
	}
	// One cleanup stops whichever slurmctld runs then (RestartController
	// replaces it), after the jobs are cancelled (cleanups run last first).
	c.t.Cleanup(func() {
		if c.ctld != nil {
			c.stop(c.ctld)
		}
	})
	if err := c.startController(); err != nil {
		return err
	}
	if _, err := c.spawn("slurmd", "-D", "-N", c.Node, "-f", c.Conf); err != nil {
		return err
	}
	c.t.Cleanup(c.cancelAllJobs)
	return c.waitFor("the node to be idle", 30*time.Second, func() bool {
		r := c.Run("sinfo", "-h", "-n", c.Node, "-o", "%T")
		return strings.TrimSpace(r.Stdout) == "idle"
	})
}

// startController starts slurmctld in the foreground (extra: "-i" to
// ignore errors reading its saved state) and waits until it answers.
func (c *Cluster) startController(extra ...string) error {
	d, err := c.start("slurmctld", append([]string{"-D", "-f", c.Conf}, extra...)...)
	if err != nil {
		return err
	}
	c.ctld = d
	return c.waitFor("slurmctld to answer", 30*time.Second, func() bool {
		return strings.Contains(c.Run("scontrol", "ping").Stdout, "is UP")
	})
}

// RestartController stops slurmctld by its PID and starts it again
// on its saved state (neither -i nor -c), as an operator's restart does; it
// fails the test if slurmctld does not come back.
func (c *Cluster) RestartController() {
	c.t.Helper()
	c.stop(c.ctld)
	if err := c.startController(); err != nil {
		c.dumpLogs()
		c.t.Fatalf("slurmtest: restart: %v", err)
	}
}

// RestartControllerDiscardingState stops slurmctld by its PID, empties
// its StateSaveLocation and starts it again: jobs and reservations are
// gone, as after a lost state directory. (-c alone is not that: it
// discards the jobs, not the reservations.) It waits until the node is
// idle again.
func (c *Cluster) RestartControllerDiscardingState() {
	c.t.Helper()
	c.stop(c.ctld)
	state := filepath.Join(c.Dir, "state")
	err := os.RemoveAll(state)
	if err == nil {
		err = os.Mkdir(state, 0o755)
	}
	if err == nil {
		err = c.startController()
	}
	if err == nil {
		err = c.waitFor("the node to be idle", 30*time.Second, func() bool {
			return strings.TrimSpace(c.Run("sinfo", "-h", "-n", c.Node, "-o", "%T").Stdout) == "idle"
		})
	}
	if err != nil {
		c.dumpLogs()
		c.t.Fatalf("slurmtest: restart with -c: %v", err)
	}
}

// spawn starts a daemon stopped by PID at cleanup (registered as soon as it
// runs, so a failed start still stops what did start).
func (c *Cluster) spawn(name string, args ...string) (*daemon, error) {
	d, err := c.start(name, args...)
	if err == nil {
		c.t.Cleanup(func() { c.stop(d) })
	}
	return d, err
}

// start starts a daemon in the foreground; the caller stops it.
func (c *Cluster) start(name string, args ...string) (*daemon, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = c.Env()
	cmd.Dir = c.Dir
	// Appended: a restarted daemon keeps its first run's output.
	log, err := os.OpenFile(filepath.Join(c.Dir, "log", name+".out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group: a signal to the test's group does not reach it
	// twice, and nothing it forks outlives the group kill below.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); log.Close(); close(d.done) }()
	return d, nil
}

// stop ends one daemon by its PID: SIGTERM, then SIGKILL to its process
// group after 15 s.
func (c *Cluster) stop(d *daemon) {
	pid := d.cmd.Process.Pid
	select {
	case <-d.done: // already stopped (a restart): its PID may be reused
		return
	default:
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(15 * time.Second):
		c.t.Logf("slurmtest: %s (pid %d) ignored SIGTERM; killing its group", d.name, pid)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-d.done
	}
}

// cancelAllJobs cancels every job and waits (bounded) until none is
// left, so no job process outlives the cluster: slurmstepd detaches from
// slurmd, and only slurmd can end it cleanly.
func (c *Cluster) cancelAllJobs() {
	c.Run("scancel", "--user=root")
	c.Run("scancel", "--user="+User2)
	err := c.waitFor("every job to end", 30*time.Second, func() bool {
		r := c.Run("squeue", "-h", "-o", "%i")
		return r.ExitCode == 0 && strings.TrimSpace(r.Stdout) == ""
	})
	if err != nil {
		c.t.Logf("slurmtest: %v", err)
	}
}

var errNotReady = errors.New("not ready")

func (c *Cluster) waitFor(what string, limit time.Duration, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %v for %s: %w", limit, what, errNotReady)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// dumpLogs puts the daemons' logs in the test log (for a start that failed).
func (c *Cluster) dumpLogs() {
	files, _ := filepath.Glob(filepath.Join(c.Dir, "log", "*"))
	files = append(files, filepath.Join(c.Dir, "munge", "log"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		c.t.Logf("== %s\n%s", f, b)
	}
}

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

// startDaemons starts munged, slurmctld and one slurmd per node in that
// order, each stopped by PID at Stop, and waits until every node is idle.
func (c *Cluster) startDaemons() error {
	if err := c.startMunge(); err != nil {
		return err
	}
	// One cleanup stops whichever slurmctld runs then (RestartController
	// replaces it), after the jobs are cancelled (Stop runs the last
	// registered first).
	c.onStop(func() {
		if c.ctld != nil {
			c.stop(c.ctld)
		}
	})
	if err := c.startController(); err != nil {
		return err
	}
	for _, n := range c.Nodes {
		if _, err := c.spawn("slurmd", "-D", "-N", n, "-f", c.Conf); err != nil {
			return err
		}
	}
	c.onStop(c.cancelAllJobs)
	return c.waitIdle()
}

func (c *Cluster) startMunge() error {
	m := filepath.Join(c.Dir, "munge")
	if _, err := c.spawn("munged", "-F", "--socket="+filepath.Join(m, "sock"),
		"--key-file="+filepath.Join(m, "key"), "--log-file="+filepath.Join(m, "log"),
		"--pid-file="+filepath.Join(m, "pid"), "--seed-file="+filepath.Join(m, "seed")); err != nil {
		return err
	}
	return c.waitFor("munged's socket", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(m, "sock"))
		return err == nil
	})
}

// waitIdle waits until every node is idle.
func (c *Cluster) waitIdle() error {
	return c.waitFor("every node to be idle", 30*time.Second, func() bool {
		state := map[string]string{}
		for _, l := range strings.Split(c.Run("sinfo", "-h", "-N", "-o", "%N %T").Stdout, "\n") {
			if f := strings.Fields(l); len(f) == 2 {
				state[f[0]] = f[1]
			}
		}
		for _, n := range c.Nodes {
			if state[n] != "idle" {
				return false
			}
		}
		return true
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
	c.StopController()
	c.StartController()
}

// StopController stops slurmctld by its PID (SIGTERM: it saves its
// state); StartController starts it again.
func (c *Cluster) StopController() {
	c.t.Helper()
	if c.ctld != nil {
		c.stop(c.ctld)
	}
}

// KillController kills slurmctld with SIGKILL: what it had not saved yet
// is lost, as in a crash.
func (c *Cluster) KillController() {
	c.t.Helper()
	if c.ctld == nil {
		return
	}
	_ = syscall.Kill(c.ctld.cmd.Process.Pid, syscall.SIGKILL)
	<-c.ctld.done
}

// StartController starts slurmctld on its saved state (after
// StopController, KillController or RestoreState) and waits until it
// answers; it fails the test if it does not.
func (c *Cluster) StartController() {
	c.t.Helper()
	if err := c.startController(); err != nil {
		c.dumpLogs()
		c.t.Fatalf("slurmtest: start slurmctld: %v", err)
	}
}

// ControllerUp says whether the slurmctld this package started runs.
func (c *Cluster) ControllerUp() bool {
	if c.ctld == nil {
		return false
	}
	select {
	case <-c.ctld.done:
		return false
	default:
		return true
	}
}

// SaveState copies slurmctld's StateSaveLocation as it is now (slurmctld
// writes it a moment after each change: the caller waits for what it wants
// kept) to a directory of the cluster and returns it for RestoreState.
func (c *Cluster) SaveState() string {
	c.t.Helper()
	dst, err := os.MkdirTemp(c.Dir, "state-copy-")
	if err == nil {
		err = copyDir(filepath.Join(c.Dir, "state"), dst)
	}
	if err != nil {
		c.t.Fatalf("slurmtest: save state: %v", err)
	}
	return dst
}

// RestoreState stops slurmctld (SIGKILL, as a crash) and replaces its
// StateSaveLocation with a copy SaveState made: started again
// (StartController), slurmctld comes back with that older state, as a
// controller whose last saves were lost.
func (c *Cluster) RestoreState(saved string) {
	c.t.Helper()
	c.KillController()
	state := filepath.Join(c.Dir, "state")
	err := os.RemoveAll(state)
	if err == nil {
		err = os.Mkdir(state, 0o755)
	}
	if err == nil {
		err = copyDir(saved, state)
	}
	if err != nil {
		c.t.Fatalf("slurmtest: restore state: %v", err)
	}
}

func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// RestartControllerDiscardingState stops slurmctld by its PID, empties
// its StateSaveLocation and starts it again: jobs and reservations are
// gone, as after a lost state directory. (-c alone is not that: it
// discards the jobs, not the reservations.) It waits until the nodes are
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
		err = c.waitIdle()
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
		c.onStop(func() { c.stop(d) })
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
	if !c.ControllerUp() { // a test stopped it: only it can end the jobs cleanly
		if err := c.startController(); err != nil {
			c.t.Logf("slurmtest: jobs not cancelled: %v", err)
			return
		}
	}
	if ids := strings.Fields(c.Run("squeue", "-h", "-o", "%i").Stdout); len(ids) > 0 {
		c.Run(append([]string{"scancel"}, ids...)...)
	}
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

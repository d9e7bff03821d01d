package slurmtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// User2 is the second Unix user the cluster's ACL tests submit as; Start
// creates it (no home, no login shell) when it does not exist.
const User2 = "lookahead-slurmtest"

// Options shape the private cluster. Zero values take the defaults.
type Options struct {
	// CPUs each real node declares (default 8; more than the machine
	// has is fine: SlurmdParameters=config_overrides).
	CPUs int
	// Nodes is the number of real nodes, each a slurmd of its own on this
	// host (default 1). One node is named after the host; more are named
	// n1, n2, … (NodeHostname this host, a port each).
	Nodes int
	// ExtraConf lines are appended to slurm.conf (ghost nodes, an Epilog,
	// scheduler parameters).
	ExtraConf []string
}

// Cluster is a running private Slurm.
type Cluster struct {
	Dir   string   // everything lives here
	Conf  string   // slurm.conf; clients find it through Env
	Node  string   // the first real node's name (the short hostname when there is one node)
	Nodes []string // every real node, in slurm.conf's order
	CPUs  int      // per node

	t        tb
	host     string
	ctld     *daemon // the running slurmctld
	cleanups []func()
	user     user.User // User2
	uid      uint32
	gid      uint32
}

// tb is what the cluster asks of the test it serves: a testing.TB, or
// (for a shared cluster between tests) a logger to standard error.
type tb interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// programs Start needs on PATH (or in /usr/sbin).
var programs = []string{"munged", "slurmctld", "slurmd", "sinfo", "squeue", "scontrol", "sbatch", "scancel"}

// Start brings up a private Slurm or skips the test with the reason. The
// cluster is stopped at the test's cleanup.
func Start(t testing.TB, opt Options) *Cluster {
	t.Helper()
	c, err := start(t, opt)
	if c != nil {
		t.Cleanup(c.Stop)
	}
	if err != nil {
		skipOrFail(t, "%v", err)
	}
	return c
}

// start brings up a private Slurm; the caller stops it (also when it
// returns an error with a cluster). Not root is a skip.
func start(t testing.TB, opt Options) (*Cluster, error) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("slurmtest: a private Slurm needs root (slurmd launches jobs as their users)")
	}
	if err := lookPrograms(); err != nil {
		return nil, fmt.Errorf("slurmtest: %v (scripts/ensure-slurm.sh installs Debian's slurmctld, slurmd, slurm-client, munge)", err)
	}
	c, err := prepare(t, opt.withDefaults())
	if err != nil {
		return c, fmt.Errorf("slurmtest: cannot prepare the cluster: %v", err)
	}
	if err := c.startDaemons(); err != nil {
		c.dumpLogs()
		return c, fmt.Errorf("slurmtest: Slurm did not start: %v", err)
	}
	return c, nil
}

func (o Options) withDefaults() Options {
	if o.CPUs <= 0 {
		o.CPUs = 8
	}
	if o.Nodes <= 0 {
		o.Nodes = 1
	}
	return o
}

// onStop registers f to run at Stop, before what was registered earlier.
func (c *Cluster) onStop(f func()) { c.cleanups = append(c.cleanups, f) }

// Stop cancels every job, stops the daemons by PID, kills any process
// left with the cluster's SLURM_CONF and removes its directory. Start
// registers it as the test's cleanup; a shared cluster is stopped by
// StopShared.
func (c *Cluster) Stop() {
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		c.cleanups[i]()
	}
	c.cleanups = nil
}

// RequireEnv, set to 1 by scripts/test.sh once scripts/ensure-slurm.sh
// installed Slurm, turns every skip after the root check into a failure:
// where Slurm is installed the live tests must run. (The name is outside
// LOOKAHEAD_*, which the daemons' configuration reads.)
const RequireEnv = "LOOKAHEADTEST_REQUIRE_SLURM"

func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf(format+" ("+RequireEnv+"=1)", args...)
	}
	t.Skipf(format, args...)
}

func lookPrograms() error {
	os.Setenv("PATH", os.Getenv("PATH")+":/usr/sbin:/sbin")
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%s not installed", p)
		}
	}
	return nil
}

// prepare makes the directory, the munge key, the second user and
// slurm.conf.
func prepare(t testing.TB, opt Options) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "lookahead-slurm-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), CPUs: opt.CPUs, t: t}
	c.onStop(func() { os.RemoveAll(dir) })
	// Runs after every daemon's stop (Stop runs the last registered first).
	c.onStop(c.killStrays)
	// munged wants execute for all on its socket's directory; the second
	// user reads slurm.conf and reaches the socket.
	if err := os.Chmod(dir, 0o755); err != nil {
		return c, err
	}
	for _, d := range []string{"munge", "state", "spool", "log", "out"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			return c, err
		}
	}
	if err := os.Chmod(filepath.Join(dir, "out"), 0o1777); err != nil {
		return c, err
	}
	host, err := os.Hostname()
	if err != nil {
		return c, fmt.Errorf("hostname: %w", err)
	}
	c.host = strings.SplitN(host, ".", 2)[0]
	c.Nodes = []string{c.host}
	if opt.Nodes > 1 {
		c.Nodes = nil
		for i := 1; i <= opt.Nodes; i++ {
			c.Nodes = append(c.Nodes, fmt.Sprintf("n%d", i))
		}
	}
	c.Node = c.Nodes[0]
	if err := c.ensureUser2(); err != nil {
		return c, err
	}
	if err := writeMungeKey(filepath.Join(dir, "munge", "key")); err != nil {
		return c, err
	}
	ports, err := freePorts(2 + len(c.Nodes))
	if err != nil {
		return c, err
	}
	conf := confText(c, ports, opt.ExtraConf)
	return c, os.WriteFile(c.Conf, []byte(conf), 0o644)
}

func writeMungeKey(path string) error {
	key := make([]byte, 1024)
	f, err := os.Open("/dev/urandom")
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Read(key); err != nil {
		return fmt.Errorf("munge key: %w", err)
	}
	return os.WriteFile(path, key, 0o400)
}

// freePorts asks the kernel for n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// confText is the cluster's slurm.conf; ports are slurmctld's, the
// default slurmd port, then one per node (used when there are several:
// each slurmd listens on its node's Port). The slurmd files carry the
// node's name (%n).
func confText(c *Cluster, ports []int, extra []string) string {
	d := c.Dir
	lines := []string{
		"ClusterName=lookahead",
		fmt.Sprintf("SlurmctldHost=%s(127.0.0.1)", c.host),
		fmt.Sprintf("SlurmctldPort=%d", ports[0]),
		fmt.Sprintf("SlurmdPort=%d", ports[1]),
		"SlurmUser=root",
		"SlurmdUser=root",
		"AuthType=auth/munge",
		"AuthInfo=socket=" + filepath.Join(d, "munge", "sock"),
		"CredType=cred/munge",
		"StateSaveLocation=" + filepath.Join(d, "state"),
		"SlurmdSpoolDir=" + filepath.Join(d, "spool", "%n"),
		"SlurmctldPidFile=" + filepath.Join(d, "slurmctld.pid"),
		"SlurmdPidFile=" + filepath.Join(d, "slurmd-%n.pid"),
		"SlurmctldLogFile=" + filepath.Join(d, "log", "slurmctld.log"),
		"SlurmdLogFile=" + filepath.Join(d, "log", "slurmd-%n.log"),
		"SchedulerType=sched/backfill",
		"SchedulerParameters=bf_interval=5",
		"SelectType=select/cons_tres",
		"SelectTypeParameters=CR_Core",
		"PriorityType=priority/multifactor",
		"PriorityWeightAge=1000",
		"PriorityWeightJobSize=100",
		"ProctrackType=proctrack/linuxproc",
		"TaskPlugin=task/none",
		"MpiDefault=none",
		"MailProg=/bin/true",
		"ReturnToService=2",
		"SlurmdParameters=config_overrides",
	}
	if len(c.Nodes) == 1 {
		lines = append(lines, fmt.Sprintf("NodeName=%s NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN", c.Node, c.CPUs))
	} else {
		for i, n := range c.Nodes {
			lines = append(lines, fmt.Sprintf("NodeName=%s NodeHostname=%s NodeAddr=127.0.0.1 Port=%d CPUs=%d State=UNKNOWN",
				n, c.host, ports[2+i], c.CPUs))
		}
	}
	lines = append(lines, fmt.Sprintf("PartitionName=batch Nodes=%s Default=YES MaxTime=INFINITE State=UP", strings.Join(c.Nodes, ",")))
	lines = append(lines, extra...)
	return strings.Join(lines, "\n") + "\n"
}

// ensureUser2 creates User2 when missing and records its ids.
func (c *Cluster) ensureUser2() error {
	u, err := user.Lookup(User2)
	if err != nil {
		out, uerr := exec.Command("useradd", "--system", "--no-create-home",
			"--shell", "/usr/sbin/nologin", User2).CombinedOutput()
		// Another test binary may have created it meanwhile: look again.
		if u, err = user.Lookup(User2); err != nil {
			return fmt.Errorf("useradd %s: %v: %s", User2, uerr, bytes.TrimSpace(out))
		}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%s: ids %q %q", User2, u.Uid, u.Gid)
	}
	c.user, c.uid, c.gid = *u, uint32(uid), uint32(gid)
	return nil
}

// User2UID is User2's uid.
func (c *Cluster) User2UID() int { return int(c.uid) }

// Env is the environment a Slurm client needs to reach this cluster: the
// test's own without any SLURM_CONF it had (getenv takes the first), plus
// this cluster's.
func (c *Cluster) Env() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SLURM_CONF=") })
	return append(env, "SLURM_CONF="+c.Conf)
}

// OutDir is a world-writable directory for job output files.
func (c *Cluster) OutDir() string { return filepath.Join(c.Dir, "out") }

// Result is one client call's answer.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// Run runs a Slurm client as root against the cluster (30 s bound).
func (c *Cluster) Run(args ...string) Result { return c.run(nil, args) }

// RunAsUser2 runs a Slurm client as User2.
func (c *Cluster) RunAsUser2(args ...string) Result {
	return c.run(&syscall.Credential{Uid: c.uid, Gid: c.gid}, args)
}

func (c *Cluster) run(cred *syscall.Credential, args []string) Result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = c.Env()
	cmd.Dir = c.OutDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			c.t.Fatalf("slurmtest: %v: %v", args, err)
		}
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), ExitCode: code}
}

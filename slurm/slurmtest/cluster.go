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
	// CPUs the one real node declares (default 8; more than the machine
	// has is fine: SlurmdParameters=config_overrides).
	CPUs int
	// ExtraConf lines are appended to slurm.conf (more nodes, an Epilog,
	// scheduler parameters).
	ExtraConf []string
}

// Cluster is a running private Slurm.
type Cluster struct {
	Dir  string // everything lives here
	Conf string // slurm.conf; clients find it through Env
	Node string // the real node's name (the short hostname)
	CPUs int

	t    testing.TB
	ctld *daemon   // the running slurmctld
	user user.User // User2
	uid  uint32
	gid  uint32
}

// programs Start needs on PATH (or in /usr/sbin).
var programs = []string{"munged", "slurmctld", "slurmd", "sinfo", "squeue", "scontrol", "sbatch", "scancel"}

// Start brings up a private Slurm or skips the test with the reason. The
// cluster is stopped at the test's cleanup.
func Start(t testing.TB, opt Options) *Cluster {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("slurmtest: a private Slurm needs root (slurmd launches jobs as their users)")
	}
	if err := lookPrograms(); err != nil {
		skipOrFail(t, "slurmtest: %v (scripts/ensure-slurm.sh installs Debian's slurmctld, slurmd, slurm-client, munge)", err)
	}
	if opt.CPUs <= 0 {
		opt.CPUs = 8
	}
	c, err := prepare(t, opt)
	if err != nil {
		skipOrFail(t, "slurmtest: cannot prepare the cluster: %v", err)
	}
	// Runs after every daemon's stop (cleanups run last first).
	t.Cleanup(c.killStrays)
	if err := c.startDaemons(); err != nil {
		c.dumpLogs()
		skipOrFail(t, "slurmtest: Slurm did not start: %v", err)
	}
	return c
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
	t.Cleanup(func() { os.RemoveAll(dir) })
	// munged wants execute for all on its socket's directory; the second
	// user reads slurm.conf and reaches the socket.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	for _, d := range []string{"munge", "state", "spool", "log", "out"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.Chmod(filepath.Join(dir, "out"), 0o1777); err != nil {
		return nil, err
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("hostname: %w", err)
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), Node: strings.SplitN(host, ".", 2)[0], CPUs: opt.CPUs, t: t}
	if err := c.ensureUser2(); err != nil {
		return nil, err
	}
	if err := writeMungeKey(filepath.Join(dir, "munge", "key")); err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	conf := confText(c, ports[0], ports[1], opt.ExtraConf)
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

func confText(c *Cluster, ctldPort, slurmdPort int, extra []string) string {
	d := c.Dir
	lines := []string{
		"ClusterName=lookahead",
		fmt.Sprintf("SlurmctldHost=%s(127.0.0.1)", c.Node),
		fmt.Sprintf("SlurmctldPort=%d", ctldPort),
		fmt.Sprintf("SlurmdPort=%d", slurmdPort),
		"SlurmUser=root",
		"SlurmdUser=root",
		"AuthType=auth/munge",
		"AuthInfo=socket=" + filepath.Join(d, "munge", "sock"),
		"CredType=cred/munge",
		"StateSaveLocation=" + filepath.Join(d, "state"),
		"SlurmdSpoolDir=" + filepath.Join(d, "spool"),
		"SlurmctldPidFile=" + filepath.Join(d, "slurmctld.pid"),
		"SlurmdPidFile=" + filepath.Join(d, "slurmd.pid"),
		"SlurmctldLogFile=" + filepath.Join(d, "log", "slurmctld.log"),
		"SlurmdLogFile=" + filepath.Join(d, "log", "slurmd.log"),
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
		fmt.Sprintf("NodeName=%s NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN", c.Node, c.CPUs),
		fmt.Sprintf("PartitionName=batch Nodes=%s Default=YES MaxTime=INFINITE State=UP", c.Node),
	}
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

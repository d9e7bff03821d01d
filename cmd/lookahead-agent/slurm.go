package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"lookahead/agent"
	"lookahead/slurm"
)

// backendSlurm is a Slurm cluster: slurmctld reached through its clients
// (sinfo, squeue, scontrol, sbatch, scancel) on this host.
const backendSlurm = "slurm"

// SlurmConfig is the Slurm cluster of backend: slurm (docs/slurm.md).
type SlurmConfig struct {
	// Conf is the cluster's slurm.conf: the clients read it (SLURM_CONF)
	// and the built-in engine takes its policy from it.
	Conf string `mapstructure:"conf" default:"/etc/slurm/slurm.conf"`
	// Bin, when set, is the directory of the clients (else PATH).
	Bin string `mapstructure:"bin"`
	// Partition, when set, is given to grid reservations and parts.
	Partition      string        `mapstructure:"partition"`
	CommandTimeout time.Duration `mapstructure:"command_timeout" default:"30s" min:"1s"`
	// Timezone is the clients' zone: scontrol prints and reads times in it.
	Timezone string `mapstructure:"timezone" default:"Local"`
}

func (c Config) slurmBackend() bool { return c.Backend == backendSlurm }

func (c Config) validateSlurm() []error {
	var errs []error
	if c.Engine == "maui" {
		errs = append(errs, fmt.Errorf("engine maui: needs backend %s (a Slurm site has no Maui); use engine builtin", backendTorque))
	}
	if _, err := time.LoadLocation(c.Slurm.Timezone); err != nil {
		errs = append(errs, fmt.Errorf("slurm.timezone %q: %w", c.Slurm.Timezone, err))
	}
	if p := c.Slurm.Partition; p != "" && strings.ContainsAny(p, " ,=\t") {
		errs = append(errs, fmt.Errorf("slurm.partition %q: one partition name", p))
	}
	return errs
}

// slurmSite is the Slurm cluster as the agent's snapshotter, reserver and
// executor: its clients run directly (never a shell) with SLURM_CONF set.
func slurmSite(c Config) *agent.SlurmSite {
	loc, err := time.LoadLocation(c.Slurm.Timezone)
	if err != nil {
		loc = time.Local // Validate reported it
	}
	cl := slurm.NewExecClient(slurm.ExecConfig{Conf: c.Slurm.Conf, Dir: c.Slurm.Bin, Timeout: c.Slurm.CommandTimeout, Loc: loc})
	return &agent.SlurmSite{Client: cl, Site: c.Site, Prefix: c.Reservations.Prefix, Partition: c.Slurm.Partition}
}

// checkSlurm is `lookahead-agent check` for a Slurm site: munge (the
// clients authenticate through it), the clients run and read as every
// snapshot reads them, the mutating ones looked up, and the agent's
// permissions (root: sbatch --uid and scontrol create reservation need it).
func checkSlurm(ctx context.Context, c Config) []checkResult {
	ctx, cancel := context.WithTimeout(ctx, 4*c.Slurm.CommandTimeout)
	defer cancel()
	out := []checkResult{checkDirOrFile("slurm.conf", c.Slurm.Conf, "set slurm.conf to the cluster's slurm.conf (readable by the agent's user)")}
	out = append(out, checkMunge(ctx, mungeSocket(c.Slurm.Conf)))
	site := slurmSite(c)
	s, err := site.Client.Snapshot(ctx)
	r := ran("slurm clients", "sinfo --json, squeue --json, scontrol show reservation", err, "slurm.bin",
		"is slurmctld up (scontrol ping) and munged running with the cluster's key? Run them as the agent's user to see")
	if err == nil {
		usable := 0
		for _, n := range s.Nodes {
			if n.Usable() {
				usable++
			}
		}
		r.Detail = fmt.Sprintf("%s: %d nodes, %d usable, %d jobs, %d reservations", r.Detail, len(s.Nodes), usable, len(s.Jobs), len(s.Reservations))
	}
	out = append(out, r)
	for _, p := range []string{"sbatch", "scancel"} {
		path := p
		if c.Slurm.Bin != "" {
			path = filepath.Join(c.Slurm.Bin, p)
		}
		out = append(out, checkCommand("slurm "+p, path, "install slurm-client or set slurm.bin"))
	}
	return append(out, checkSlurmUser())
}

// mungeSocket is the munged socket slurm.conf names (AuthInfo=socket=…),
// or "" for munge's default.
func mungeSocket(conf string) string {
	f, err := os.Open(conf)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc, err := slurm.ReadConf(f)
	if err != nil {
		return ""
	}
	for _, opt := range strings.Split(sc.Param("AuthInfo"), ",") {
		if s, ok := strings.CutPrefix(opt, "socket="); ok {
			return s
		}
	}
	return ""
}

// checkMunge looks for munged's client and asks munged (on socket, or
// its default one) for a credential, as every Slurm client does.
func checkMunge(ctx context.Context, socket string) checkResult {
	p, err := exec.LookPath("munge")
	if err != nil {
		return checkResult{Name: "munge", Detail: err.Error(), Fix: "install munge; Slurm 22.05 authenticates through munged"}
	}
	args := []string{"-n"}
	if socket != "" {
		args = append(args, "--socket="+socket)
	}
	if out, err := exec.CommandContext(ctx, p, args...).CombinedOutput(); err != nil {
		return checkResult{Name: "munge", Detail: fmt.Sprintf("munge -n: %v: %s", err, strings.TrimSpace(string(out))),
			Fix: "start munged with the cluster's key (systemctl start munge)"}
	}
	return checkResult{Name: "munge", OK: true, Detail: "munge -n: a credential was issued"}
}

// checkSlurmUser: creating reservations needs a Slurm operator (root or
// SlurmUser without slurmdbd) and sbatch --uid needs root.
func checkSlurmUser() checkResult {
	if os.Geteuid() != 0 {
		return checkResult{Name: "slurm permissions", Detail: fmt.Sprintf("running as uid %d", os.Geteuid()),
			Fix: "run the agent as root on a Slurm site: scontrol create reservation needs an operator and sbatch --uid needs root (docs/security.md)"}
	}
	return checkResult{Name: "slurm permissions", OK: true, Detail: "root: may create reservations and submit parts as their mapped users"}
}

func checkDirOrFile(name, path, fix string) checkResult {
	f, err := os.Open(path)
	if err != nil {
		return checkResult{Name: name, Detail: err.Error(), Fix: fix}
	}
	f.Close()
	return checkResult{Name: name, OK: true, Detail: path}
}

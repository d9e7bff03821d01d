package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"lookahead/agent"
	"lookahead/internal/execx"
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
	return &agent.SlurmSite{Client: cl, Site: c.Site, Prefix: c.Reservations.Prefix, Partition: c.Slurm.Partition, Users: agent.SystemUsers}
}

// checkSlurm is `lookahead-agent check` for a Slurm site: munge (the
// clients authenticate through it), slurmctld answering (scontrol ping,
// at once: the other clients wait about 9 s each for a controller that is
// down, so nothing else that needs it runs then), the clients run and
// read as every snapshot reads them, what the first grid job needs
// (select/cons_tres, the partition, a reservation slurmctld lets the
// agent make), the mutating clients looked up, and the agent's
// permissions (root: sbatch --uid and scontrol create reservation need
// it). ok says whether slurmctld answered (the forecast check needs it).
func checkSlurm(ctx context.Context, c Config) (out []checkResult, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 6*c.Slurm.CommandTimeout)
	defer cancel()
	out = append(out, checkDirOrFile("slurm.conf", c.Slurm.Conf, "set slurm.conf to the cluster's slurm.conf (readable by the agent's user)"))
	out = append(out, checkMunge(ctx, mungeSocket(c.Slurm.Conf)))
	site := slurmSite(c)
	cl := site.Client.(*slurm.Client)
	ping := checkPing(ctx, cl, c)
	out = append(out, ping)
	if ping.OK {
		out = append(out, checkSlurmClients(ctx, site), checkSelectType(ctx, cl), checkPartition(ctx, cl, c.Slurm.Partition),
			checkReservationProbe(ctx, site, c))
	}
	for _, p := range []string{"sbatch", "scancel"} {
		path := p
		if c.Slurm.Bin != "" {
			path = filepath.Join(c.Slurm.Bin, p)
		}
		out = append(out, checkCommand("slurm "+p, path, "install slurm-client or set slurm.bin"))
	}
	return append(out, checkSlurmUser()), ping.OK
}

func checkPing(ctx context.Context, cl *slurm.Client, c Config) checkResult {
	err := cl.Ping(ctx)
	if errors.Is(err, execx.ErrNotInstalled) {
		return checkResult{Name: "slurmctld", Detail: err.Error(), Fix: "install slurm-client or set slurm.bin to the directory of scontrol"}
	}
	if err != nil {
		return checkResult{Name: "slurmctld", Detail: err.Error(),
			Fix: "start slurmctld (systemctl start slurmctld) and munged with the cluster's key; `scontrol ping` run as the agent's user with SLURM_CONF=" +
				c.Slurm.Conf + " must say UP (the other Slurm checks are skipped until it does)"}
	}
	return checkResult{Name: "slurmctld", OK: true, Detail: "scontrol ping: UP"}
}

func checkSlurmClients(ctx context.Context, site *agent.SlurmSite) checkResult {
	s, err := site.Client.Snapshot(ctx)
	r := ran("slurm clients", "sinfo --json, squeue --json, scontrol show reservation", err, "slurm.bin",
		"run them as the agent's user to see why they fail")
	if err == nil {
		usable := 0
		for _, n := range s.Nodes {
			if n.Usable() {
				usable++
			}
		}
		r.Detail = fmt.Sprintf("%s: %d nodes, %d usable, %d jobs, %d reservations", r.Detail, len(s.Nodes), usable, len(s.Jobs), len(s.Reservations))
	}
	return r
}

// checkSelectType: grid reservations hold cores (nodes=… corecnt=…),
// which needs select/cons_tres; under select/linear every core
// reservation is refused with the words of an overlap.
func checkSelectType(ctx context.Context, cl *slurm.Client) checkResult {
	cfg, err := cl.Config(ctx)
	if err != nil {
		return checkResult{Name: "slurm select type", Detail: err.Error(), Fix: "run `scontrol show config` as the agent's user to see why it fails"}
	}
	st, params := cfg["SelectType"], cfg["SelectTypeParameters"]
	if st != "select/cons_tres" {
		return checkResult{Name: "slurm select type", Detail: fmt.Sprintf("SelectType %s (SelectTypeParameters %s)", st, params),
			Fix: "set SelectType=select/cons_tres and SelectTypeParameters=CR_Core (or CR_Core_Memory) in slurm.conf and restart slurmctld and every slurmd: grid reservations hold cores, which " +
				st + " cannot (it refuses every core reservation as if the nodes were busy)"}
	}
	if memoryWholeNode(cfg) {
		return checkResult{Name: "slurm select type", Detail: fmt.Sprintf("%s, %s with DefMemPerNode %s and no DefMemPerCPU: every job gets its nodes' whole memory, so a node running one job starts no other there, and a grid part planned on its free cores never starts",
			st, params, cfg["DefMemPerNode"]),
			Fix: "set DefMemPerCPU (at most a node's RealMemory divided by its CPUs) in slurm.conf and run `scontrol reconfigure`, or use SelectTypeParameters=CR_Core"}
	}
	return checkResult{Name: "slurm select type", OK: true, Detail: fmt.Sprintf("%s, %s", st, params)}
}

// memoryWholeNode says whether slurmctld counts memory as a resource
// (CR_*_MEMORY) and gives a job that asks for none its nodes' whole
// memory (no DefMemPerCPU, DefMemPerNode UNLIMITED: Slurm's default).
// Then one job on a node leaves none of its cores usable, which the
// forecast (cores only) cannot see.
func memoryWholeNode(cfg map[string]string) bool {
	if !strings.Contains(strings.ToUpper(cfg["SelectTypeParameters"]), "MEMORY") {
		return false
	}
	if _, ok := cfg["DefMemPerCPU"]; ok {
		return false
	}
	n, ok := cfg["DefMemPerNode"]
	return !ok || n == "UNLIMITED" || n == "0"
}

// checkPartition: slurm.partition names a partition, or the cluster has
// a default one.
func checkPartition(ctx context.Context, cl *slurm.Client, want string) checkResult {
	ps, err := cl.Partitions(ctx)
	if err != nil {
		return checkResult{Name: "slurm partition", Detail: err.Error(), Fix: "run `scontrol show partition` as the agent's user to see why it fails"}
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
		if want == "" && p.Default || p.Name == want {
			detail := fmt.Sprintf("%s (nodes %s, state %s)", p.Name, p.Nodes, p.State)
			if want == "" {
				detail = "the default partition: " + detail
			}
			return checkResult{Name: "slurm partition", OK: true, Detail: detail}
		}
	}
	if want == "" {
		return checkResult{Name: "slurm partition", Detail: fmt.Sprintf("no default partition (partitions: %s)", strings.Join(names, ", ")),
			Fix: "set slurm.partition to the partition grid jobs use, or mark one Default=YES in slurm.conf"}
	}
	return checkResult{Name: "slurm partition", Detail: fmt.Sprintf("slurm.partition %s: no such partition (partitions: %s)", want, strings.Join(names, ", ")),
		Fix: "set slurm.partition to one of the cluster's partitions, or leave it empty for the default one"}
}

// checkReservationProbe makes and deletes a 1-core reservation a year
// ahead (users=root, named lookahead-check-<pid>, which no grid job's
// name can be): whether slurmctld lets the agent create reservations at
// all. It is the one Slurm check that changes state, for a second.
func checkReservationProbe(ctx context.Context, site *agent.SlurmSite, c Config) checkResult {
	const name = "slurm reservations"
	nodes, err := site.Client.Nodes(ctx)
	if err != nil || len(nodes) == 0 {
		return checkResult{Name: name, Detail: fmt.Sprintf("no node to try a reservation on (%v)", err), Fix: "see the slurm clients line"}
	}
	probe := fmt.Sprintf("lookahead-check-%d", os.Getpid())
	start := time.Now().Add(365 * 24 * time.Hour).Truncate(time.Second)
	spec := slurm.ReservationSpec{Name: probe, Users: []string{"root"}, Start: start, End: start.Add(time.Minute),
		Nodes: nodes[0].Name, CoreCount: 1, Partition: c.Slurm.Partition}
	ans, err := site.Client.CreateReservation(ctx, spec)
	switch {
	case err != nil:
		return checkResult{Name: name, Detail: err.Error(), Fix: "run `scontrol create reservation` as the agent's user to see why it fails"}
	case ans.Code != slurm.Created:
		return checkResult{Name: name, Detail: fmt.Sprintf("a 1-core reservation on %s a year ahead: %s: %s", nodes[0].Name, ans.Code, ans.Reason),
			Fix: probeFix(ans.Code)}
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.Slurm.CommandTimeout)
	defer cancel()
	if d, err := site.Client.DeleteReservation(dctx, probe); err != nil || !d.Ok() {
		return checkResult{Name: name, Detail: fmt.Sprintf("made %s but could not delete it: %v %s", probe, err, d.Reason),
			Fix: "delete it: scontrol delete reservationname=" + probe}
	}
	return checkResult{Name: name, OK: true, Detail: fmt.Sprintf("made and deleted a 1-core reservation on %s a year ahead (%s)", nodes[0].Name, probe)}
}

func probeFix(c slurm.Code) string {
	if h := agent.SlurmRefusalHint(c); h != "" {
		return h
	}
	return "run `scontrol create reservation` as the agent's user to see why it fails"
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

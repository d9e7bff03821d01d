package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"lookahead/agent"
	"lookahead/internal/cli"
	"lookahead/internal/execx"
	"lookahead/internal/natsconn"
	"lookahead/maui"
	"lookahead/torque"
	"lookahead/wire"
)

// checkResult is one check of `lookahead-agent check`.
type checkResult = cli.Check

type checkOptions struct {
	output string
	skip   []string
}

func newCheckCommand(g *globalOptions) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the configuration, Torque/Maui access and NATS connectivity",
		Long: `Check everything the daemon needs, print what is wrong and how to fix it:
the configuration; Torque's pbsnodes and qstat, run and read; the
pbs_server log directories; the state directory; Maui's showres, showres -n,
diagnose -r and showq, run and read (and setres/releaseres looked up); with
engine: maui, a tiny Maui simulation with the site's maui.cfg; one forecast
exactly as the daemon builds it; and the NATS connection with JetStream.
On a Slurm site (backend: slurm) the Slurm clients (sinfo, squeue,
scontrol) run and read, and slurm.conf's policy, replace the Torque and
Maui checks (docs/slurm.md).
Exits 0 when everything passed, 3 when the only failures are
services that could not be reached (NATS), 1 when another check failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckFormat(opts.output); err != nil {
				return err
			}
			if err := cli.CheckChoices("--skip", opts.skip, checkNames); err != nil {
				return err
			}
			c, err := g.load(cmd)
			if err != nil {
				return err
			}
			return runCheck(cmd.Context(), c, opts, cmd.OutOrStdout())
		},
	}
	cli.AddOutputFlag(cmd, &opts.output)
	cmd.Flags().StringSliceVar(&opts.skip, "skip", nil, "checks to skip: "+strings.Join(checkNames, ", "))
	return cmd
}

// checkNames are the checks --skip can name.
var checkNames = []string{"torque", "output", "logs", "state", "maui", "slurm", "forecast", "nats"}

func runCheck(ctx context.Context, c Config, opts *checkOptions, w io.Writer) error {
	skip := map[string]bool{}
	for _, s := range opts.skip {
		skip[s] = true
	}
	results := []checkResult{{Name: "config", OK: true, Detail: "valid"}}
	if c.simulated() { // no Torque or Maui to check; the forecast check builds the simulated site
		results[0].Detail = "valid; backend simulated (no Torque or Maui)"
		skip["torque"], skip["logs"], skip["maui"] = true, true, true
	}
	if c.slurmBackend() { // no Torque or Maui: the Slurm clients instead
		results[0].Detail = "valid; backend slurm"
		skip["torque"], skip["logs"], skip["maui"] = true, true, true
		if !skip["slurm"] {
			rs, up := checkSlurm(ctx, c)
			results = append(results, rs...)
			skip["forecast"] = skip["forecast"] || !up // it needs slurmctld
		}
	}
	if len(c.Dispatch.Users) > 0 {
		results = append(results, checkDispatchUsers(c, agent.SystemUsers)...)
	}
	if !skip["torque"] {
		results = append(results, checkTorque(ctx, c)...)
	}
	if !skip["logs"] {
		results = append(results, checkDir("server_logs", c.serverLogs(), false,
			"set torque.server_logs (or torque.pbs_home); the agent's user needs read access (e.g. group membership)"),
			checkDir("accounting", c.accountingDir(), false, "set torque.accounting (or torque.pbs_home) and grant read access"))
	}
	if !skip["state"] {
		results = append(results, checkDir("state_dir", c.StateDir, true, "create it owned by the agent's user, or set state_dir"))
	}
	if r, ok := checkOutput(ctx, c); ok && !skip["torque"] && !skip["output"] {
		results = append(results, r)
	}
	if holder(c) != nil && !skip["torque"] {
		fix := "set torque.%s to its path, or reservations.foreign_jobs: grace; the agent's user must be a Torque operator or manager to hold other users' jobs (qmgr -c 'set server operators += lookahead-agent@*')"
		results = append(results, checkCommand("torque qhold", c.Torque.Qhold, fmt.Sprintf(fix, "qhold")),
			checkCommand("torque qrls", c.Torque.Qrls, fmt.Sprintf(fix, "qrls")))
	}
	if !skip["maui"] {
		results = append(results, checkMaui(ctx, c)...)
	}
	if !skip["maui"] && c.Engine == "maui" {
		results = append(results, checkSimulation(ctx, c))
	}
	if !skip["forecast"] && ((!skip["torque"] && !skip["maui"]) || c.simulated() || (c.slurmBackend() && !skip["slurm"])) { // a forecast reads both
		results = append(results, checkSitePolicy(c), checkForecast(ctx, c))
		if r, ok := checkFairshare(ctx, c, time.Now()); ok {
			results = append(results, r)
		}
	}
	if !skip["nats"] {
		results = append(results, checkNATS(ctx, c)...)
	}
	if err := cli.PrintChecks(w, opts.output, results); err != nil {
		return err
	}
	return cli.ChecksError(results)
}

// checkTorque runs pbsnodes and qstat as the snapshot does and reads
// their output.
func checkTorque(ctx context.Context, c Config) []checkResult {
	ctx, cancel := context.WithTimeout(ctx, 2*c.Torque.CommandTimeout)
	defer cancel()
	client := torque.NewClient(torque.NewExecRunner(torque.ExecConfig{Timeout: c.Torque.CommandTimeout}),
		torque.ClientConfig{Site: c.Site, Qstat: c.Torque.Qstat, Pbsnodes: c.Torque.Pbsnodes})
	down := "is pbs_server running, and trqauthd beside it? Run it as the agent's user to see"
	nodes, err := client.Nodes(ctx)
	out := []checkResult{ran("torque pbsnodes", c.Torque.Pbsnodes+" -x", err, "torque.pbsnodes", down)}
	if err == nil {
		usable := 0
		for _, n := range nodes {
			if n.Usable() {
				usable++
			}
		}
		out[0].Detail = fmt.Sprintf("%s: %d nodes, %d usable", out[0].Detail, len(nodes), usable)
	}
	jobs, err := client.Jobs(ctx)
	r := ran("torque qstat", c.Torque.Qstat+" -f -x -t", err, "torque.qstat", down)
	if err == nil {
		r.Detail = fmt.Sprintf("%s: %d jobs", r.Detail, len(jobs))
	}
	return append(out, r)
}

// ran turns a command's outcome into a check result with advice: where
// to point the config when the command is missing, what to look at when
// it fails.
func ran(name, cmd string, err error, key, failing string) checkResult {
	switch {
	case err == nil:
		return checkResult{Name: name, OK: true, Detail: cmd}
	case errors.Is(err, execx.ErrNotInstalled):
		return checkResult{Name: name, Detail: err.Error(), Fix: "set " + key + " to its path (a bare name is looked up on PATH)"}
	}
	return checkResult{Name: name, Detail: err.Error(), Fix: failing}
}

// checkMaui runs the Maui clients the agent uses: showres, showres -n and
// diagnose -r (the reservations in force, read as every snapshot reads
// them) and showq; setres and releaseres change state, so they are only
// looked up.
func checkMaui(ctx context.Context, c Config) []checkResult {
	ctx, cancel := context.WithTimeout(ctx, 4*c.Maui.CommandTimeout)
	defer cancel()
	admin := "is maui running, does maui.home (" + c.Maui.Home + ") hold its maui.cfg, and is the agent's user a Maui admin (ADMIN1/ADMIN3 in maui.cfg)?"
	res, err := mauiReserver(c)
	if err != nil {
		return []checkResult{{Name: "maui", Detail: err.Error(), Fix: "fix maui.timezone"}}
	}
	holds, err := res.Holds(ctx)
	r := ran("maui showres", c.Maui.Showres+", showres -n, "+c.Maui.diagnose()+" -r", err, "maui.showres (and maui.diagnose)", admin)
	if err == nil {
		r.Detail = fmt.Sprintf("%s: %d reservations in force", r.Detail, len(holds))
	}
	out := []checkResult{r}
	showq := c.Maui.besideShowres("showq")
	q, err := maui.LiveOrder(ctx, res.Runner)
	r = ran("maui showq", showq+" -i", err, "maui.showres (showq is looked up beside it)", admin)
	if err == nil {
		r.Detail = fmt.Sprintf("%s: %d idle jobs", r.Detail, len(q))
	}
	out = append(out, r)
	for _, m := range []struct{ name, path string }{{"maui setres", c.Maui.Setres}, {"maui releaseres", c.Maui.Releaseres}} {
		out = append(out, checkCommand(m.name, m.path, "set maui."+m.name[5:]+" to its path; the agent's user must be a Maui ADMIN (ADMIN1/ADMIN3 in maui.cfg) to run it"))
	}
	return out
}

// checkSimulation runs a tiny Maui simulation with the site's policy,
// as engine maui does for every forecast.
func checkSimulation(ctx context.Context, c Config) checkResult {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	start := time.Now()
	_, err := simulator(c).SelfTest(ctx, start.Unix())
	if err == nil {
		return checkResult{Name: "maui simulation", OK: true, Detail: fmt.Sprintf("a 2-job simulation with %s ran in %v",
			filepath.Join(c.Maui.Home, "maui.cfg"), time.Since(start).Round(time.Millisecond))}
	}
	fix := "see the error: the simulation copies maui.cfg's policy; SERVERHOST must be this host's name; or use engine: builtin"
	if errors.Is(err, maui.ErrNotInstalled) {
		fix = "set maui.maui to the maui server (a standard install has it in sbin/) and maui.showres to the clients' showres (bin/)"
	}
	return checkResult{Name: "maui simulation", Detail: err.Error(), Fix: fix}
}

func checkCommand(name, path, fix string) checkResult {
	p, err := exec.LookPath(path)
	if err != nil {
		return checkResult{Name: name, Detail: err.Error(), Fix: fix}
	}
	return checkResult{Name: name, OK: true, Detail: p}
}

func checkDir(name, dir string, write bool, fix string) checkResult {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return checkResult{Name: name, Detail: err.Error(), Fix: fix}
	}
	if write {
		f, err := os.CreateTemp(dir, ".check-*")
		if err != nil {
			return checkResult{Name: name, Detail: "not writable: " + err.Error(), Fix: fix}
		}
		f.Close()
		os.Remove(f.Name())
	}
	return checkResult{Name: name, OK: true, Detail: fmt.Sprintf("%s (%d entries)", filepath.Clean(dir), len(entries))}
}

func checkForecast(ctx context.Context, c Config) checkResult {
	ac, _ := c.agentConfig()
	a, err := agent.New(ac, agent.Deps{Snapshotter: snapshotter(c, ""), Engine: engine(c)})
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, 2*c.Torque.CommandTimeout+time.Minute)
		defer cancel()
		var start = time.Now()
		f, ferr := a.BuildOnce(ctx)
		if ferr == nil {
			return checkResult{Name: "forecast", OK: true, Detail: fmt.Sprintf("%d nodes, %d slots in %v",
				len(f.Nodes), len(f.Slots), time.Since(start).Round(time.Millisecond))}
		}
		err = ferr
	}
	return checkResult{Name: "forecast", Detail: err.Error(),
		Fix: "run `lookahead-agent forecast --once` as the agent's user to see the failing step"}
}

func checkNATS(ctx context.Context, c Config) []checkResult {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, nc := cli.CheckNATS(ctx, c.natsConfig())
	if nc == nil {
		return []checkResult{r}
	}
	defer nc.Close()
	return []checkResult{r, checkGridStreams(ctx, nc, c.NATS)}
}

// checkGridStreams binds the forecast bucket and the audit stream as the
// agent does at start, in the JetStream nats.js_domain names.
func checkGridStreams(ctx context.Context, nc *nats.Conn, c natsconn.Config) checkResult {
	r := checkResult{Name: "grid streams"}
	js, err := natsconn.JetStream(nc, c.JSDomain)
	if err != nil {
		r.Detail, r.Fix = err.Error(), "fix nats.js_domain"
		return r
	}
	var missing []string
	if _, err := js.KeyValue(ctx, wire.ForecastBucket); err != nil {
		missing = append(missing, "forecast bucket "+wire.ForecastBucket+": "+err.Error())
	}
	if _, err := js.Stream(ctx, wire.AuditStream); err != nil {
		missing = append(missing, "audit stream "+wire.AuditStream+": "+err.Error())
	}
	if len(missing) == 0 {
		r.OK, r.Detail = true, "the forecast bucket and the audit stream are there"
		return r
	}
	r.Detail = strings.Join(missing, "; ")
	if !c.Authenticated() {
		r.OK, r.Detail = true, r.Detail+"; NATS authentication is off, so the agent creates them at start"
		return r
	}
	r.Fix = "start the broker or run `lookahead-broker init` first (the agent creates them with one replica only where it may); if the JetStream reached is not the grid's (a leaf node's own), set nats.js_domain to the grid's domain"
	return r
}

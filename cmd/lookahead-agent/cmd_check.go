package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"lookahead/agent"
	"lookahead/internal/cli"
	"lookahead/internal/natsconn"
)

// checkResult is one check of `lookahead-agent check`.
type checkResult struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

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
the configuration, the Torque client commands (and one real snapshot), the
pbs_server log directories, the state directory, the Maui reservation
commands, a built-in forecast, and the NATS connection with JetStream.
Exits 0 when everything passed, 1 when a check failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.CheckFormat(opts.output); err != nil {
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
	cmd.Flags().StringSliceVar(&opts.skip, "skip", nil, "checks to skip: torque, logs, state, maui, forecast, nats")
	return cmd
}

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
	if !skip["torque"] {
		results = append(results, checkCommand("torque qstat", c.Torque.Qstat, "set torque.qstat to the qstat path"),
			checkCommand("torque pbsnodes", c.Torque.Pbsnodes, "set torque.pbsnodes to the pbsnodes path"))
	}
	if !skip["logs"] {
		results = append(results, checkDir("server_logs", c.serverLogs(), false,
			"set torque.server_logs (or torque.pbs_home); the agent's user needs read access (e.g. group membership)"),
			checkDir("accounting", c.accountingDir(), false, "set torque.accounting (or torque.pbs_home) and grant read access"))
	}
	if !skip["state"] {
		results = append(results, checkDir("state_dir", c.StateDir, true, "create it owned by the agent's user, or set state_dir"))
	}
	if !skip["maui"] {
		for _, m := range []struct{ name, path string }{{"maui setres", c.Maui.Setres}, {"maui showres", c.Maui.Showres}, {"maui releaseres", c.Maui.Releaseres}, {"maui diagnose", c.Maui.diagnose()}} {
			results = append(results, checkCommand(m.name, m.path, "set maui."+m.name[5:]+" to its path; the agent's user must be a Maui ADMIN (ADMIN1/ADMIN3 in maui.cfg) to run it"))
		}
	}
	if !skip["maui"] && c.Engine == "maui" {
		results = append(results, checkCommand("maui simulation binary", c.Maui.Maui, "set maui.maui to the maui binary, or use engine: builtin"))
	}
	if !skip["forecast"] && (!skip["torque"] || c.simulated()) {
		results = append(results, checkSitePolicy(c), checkForecast(ctx, c))
	}
	if !skip["nats"] {
		results = append(results, checkNATS(ctx, c))
	}
	if err := printChecks(w, opts.output, results); err != nil {
		return err
	}
	for _, r := range results {
		if !r.OK {
			return errors.New("some checks failed")
		}
	}
	return nil
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

func checkNATS(ctx context.Context, c Config) checkResult {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, c.natsConfig())
	if err != nil {
		return checkResult{Name: "nats", Detail: err.Error(), Fix: "check nats.url, credentials and that the server is reachable"}
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err == nil {
		_, err = js.AccountInfo(ctx)
	}
	if err != nil {
		return checkResult{Name: "nats", Detail: "connected, but JetStream: " + err.Error(),
			Fix: "enable JetStream on the server and for this account"}
	}
	return checkResult{Name: "nats", OK: true, Detail: "connected to " + nc.ConnectedUrlRedacted() + ", JetStream available"}
}

func printChecks(w io.Writer, format string, results []checkResult) error {
	if format == cli.FormatJSON {
		return cli.WriteJSON(w, results)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range results {
		mark := "ok"
		if !r.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, r.Name, r.Detail)
		if r.Fix != "" {
			fmt.Fprintf(tw, "\t\tfix: %s\n", r.Fix)
		}
	}
	return tw.Flush()
}

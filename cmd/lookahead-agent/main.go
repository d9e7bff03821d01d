// Command lookahead-agent is the lookahead site agent: it forecasts the
// local Torque/Maui schedule, publishes priced slots over NATS, and serves
// the broker's reserve/release/list requests with Maui reservations.
package main

import (
	"context"
	"lookahead/internal/version"

	"github.com/spf13/cobra"

	"lookahead/internal/cli"
)

func main() {
	cli.Main("lookahead-agent", func(ctx context.Context) error {
		return cli.Execute(ctx, newRootCommand())
	})
}

// globalOptions are the flags every command shares.
type globalOptions struct {
	configFile string
	// warnings are the last load's: run logs them, config prints them.
	warnings []string
}

func newRootCommand() *cobra.Command {
	opts := &globalOptions{}
	root := &cobra.Command{
		Use:   "lookahead-agent",
		Short: "The lookahead site agent for Torque/Maui and Slurm clusters",
		Long: `lookahead-agent runs on a cluster's scheduler host: the pbs_server/Maui
host of a Torque site (backend: torque), or a host with the Slurm clients
of a Slurm site (backend: slurm; docs/slurm.md). It forecasts the local
schedule (built-in simulator, or Maui SIMULATION on a Torque site),
publishes the priced idle time as slots over NATS, and protects grid jobs
with the scheduler's advance reservations (Maui setres, Slurm scontrol
create reservation) on the broker's request.

Configuration: ` + DefaultConfigFile + ` (or --config), LOOKAHEAD_* environment
variables (LOOKAHEAD_NATS_URL for nats.url) and flags, in rising precedence.
Unknown keys and durations without a unit (refresh: 60) are errors naming
the key and the file line, the variable or the flag; ` + "`lookahead-agent config`" + `
prints the effective configuration.

` + cli.ExitCodesHelp,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&opts.configFile, "config", DefaultConfigFile, "configuration file (YAML)")
	pf.String("site", "", "site name (config key site)")
	pf.String("log-level", "", "log level: debug, info, warn, error (config key log_level)")
	pf.String("nats-url", "", "NATS server URL (config key nats.url)")
	root.AddCommand(newRunCommand(opts))
	root.AddCommand(newForecastCommand(opts))
	root.AddCommand(newCheckCommand(opts))
	root.AddCommand(newStatusCommand(opts))
	root.AddCommand(newEventsCommand(opts))
	root.AddCommand(newConfigCommand(opts))
	return root
}

// load reads and validates the configuration for cmd and keeps its
// warnings (such as a LOOKAHEAD_* variable that sets no key) in
// o.warnings: run logs them, config prints them; not every tool's output.
func (o *globalOptions) load(cmd *cobra.Command) (Config, error) {
	explicit := cmd.Flags().Changed("config")
	c, l, err := readConfig(o.configFile, explicit, cmd.Flags(), true)
	o.warnings = l.Warnings
	if err != nil {
		return c, cli.UsageError{Err: err}
	}
	return c, nil
}

// Command lookahead is the grid user's and operator's CLI: offline planning
// and simulation, and (against a running broker) submit, status, plan and
// audit.
package main

import (
	"context"
	"fmt"
	"lookahead/internal/version"

	"github.com/spf13/cobra"

	"lookahead/broker/client"
	"lookahead/internal/cli"
	"lookahead/internal/config"
)

func main() {
	cli.Main("lookahead", func(ctx context.Context) error {
		return cli.Execute(ctx, newRootCommand())
	})
}

// newRootCommand builds the command tree; commands are added explicitly.
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "lookahead",
		Short: "Plan parallel grid jobs into the forecast idle time of Torque/Maui and Slurm clusters",
		Long: `lookahead lets clusters run by Torque and Maui, or by Slurm, lend their idle
future to a grid. Agents on each cluster publish forecast time slots with
prices; a broker co-allocates grid jobs across sites and protects the plan
with the scheduler's reservations (Maui setres, Slurm scontrol create
reservation). This CLI talks to the broker and also works offline on
forecast files.

Settings: flags, then LOOKAHEAD_NATS_* environment variables (--nats-url
from LOOKAHEAD_NATS_URL, --nats-creds from LOOKAHEAD_NATS_CREDS, ...), then
the defaults; there is no config file. Durations take a unit (--walltime
90m, --timeout 30s).

` + cli.ExitCodesHelp,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			for _, w := range client.StrayEnv(config.ReadElsewhere) {
				fmt.Fprintf(cmd.ErrOrStderr(), "lookahead: warning: %s\n", w)
			}
		},
	}
	root.AddCommand(
		// commands are added here, one file each (cmd_<name>.go)
		newPlanCommand(), newSubmitCommand(), newStatusCommand(), newCancelCommand(), newSitesCommand(), newAuditCommand(), newDemoCommand(), newReplayCommand(), newSimulateCommand(), newForecastCommand(),
	)
	return root
}

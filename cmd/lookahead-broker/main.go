// Command lookahead-broker is the lookahead broker daemon: it watches every
// site's forecast, keeps the grid queue in JetStream, plans in cycles,
// reserves on all involved sites or none, and keeps the audit trail.
package main

import (
	"context"
	"lookahead/internal/version"

	"github.com/spf13/cobra"

	"lookahead/internal/cli"
)

func main() {
	cli.Main("lookahead-broker", func(ctx context.Context) error {
		return cli.Execute(ctx, newRootCommand())
	})
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "lookahead-broker",
		Short: "The lookahead broker daemon",
		Long: `lookahead-broker is the grid's one central process. It watches every site's
forecast (JetStream KV), keeps the grid queue durably (a JetStream stream),
plans grid jobs in cycles with the co-allocation core, reserves them on all
involved sites or none, and appends every action to the audit stream.

Configuration: flags > LOOKAHEAD_* environment (LOOKAHEAD_PLANNING_CYCLE for
planning.cycle) > /etc/lookahead/broker.yaml (or --config) > defaults (see
the packaged broker.yaml for every key). Unknown keys and durations without
a unit (cycle: 30) are errors naming the key and the file line, the
variable or the flag; ` + "`lookahead-broker config`" + ` prints the effective
configuration.

` + cli.ExitCodesHelp,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addGlobalFlags(root.PersistentFlags())
	root.AddCommand(newRunCommand(), newConfigCommand(), newInitCommand(), newCheckCommand(),
		newStatusCommand(), newStepDownCommand())
	return root
}

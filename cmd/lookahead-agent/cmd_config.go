package main

import (
	"github.com/spf13/cobra"

	"lookahead/internal/cli"
)

func newConfigCommand(g *globalOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "config [-o json|table]",
		Short: "Check the configuration and print it as it takes effect (JSON, or a table with where each key was set)",
		Long: `Read the configuration as ` + "`run`" + ` would (flags > LOOKAHEAD_* environment >
file > defaults), check it, and print the result (secrets left out): as
JSON by default (-o json; it is also a valid config file), or with
-o table one key a line with its value and where it was set (file:line,
variable, flag or default). An unknown key, a duration without a unit or a
value out of bounds is an error naming the key and where it was written;
the exit code is then 2. Nothing is contacted: ` + "`lookahead-agent check`" + ` also
tries the scheduler (Torque and Maui, or Slurm) and NATS.`,
		Example: `  lookahead-agent config
  lookahead-agent config -o table
  lookahead-agent config --config ./agent.yaml | jq .intervals`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cli.CheckFormat(output); err != nil {
				return err
			}
			explicit := cmd.Flags().Changed("config")
			c, l, err := readConfig(g.configFile, explicit, cmd.Flags(), true)
			for _, w := range l.Warnings {
				cli.Warn(cmd.ErrOrStderr(), cmd, w)
			}
			if err != nil {
				return cli.UsageError{Err: err}
			}
			return cli.PrintConfig(cmd.OutOrStdout(), output, c, l)
		},
	}
	cli.AddOutputFlagDefault(cmd, &output, cli.FormatJSON)
	return cmd
}

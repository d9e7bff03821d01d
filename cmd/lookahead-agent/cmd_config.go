package main

import (
	"github.com/spf13/cobra"

	"lookahead/internal/cli"
	"lookahead/internal/config"
)

func newConfigCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Check the configuration and print it as it takes effect (JSON)",
		Long: `Read the configuration as ` + "`run`" + ` would (flags > LOOKAHEAD_* environment >
file > defaults), check it, and print the result as JSON (secrets left
out). An unknown key, a duration without a unit or a value out of bounds
is an error naming the key and where it was written; the exit code is
then 2. Nothing is contacted: ` + "`lookahead-agent check`" + ` also tries Torque,
Maui and NATS.`,
		Example: `  lookahead-agent config
  lookahead-agent config --config ./agent.yaml | jq .intervals`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.load(cmd)
			if err != nil {
				return err
			}
			return cli.WriteJSON(cmd.OutOrStdout(), config.Effective(c))
		},
	}
}

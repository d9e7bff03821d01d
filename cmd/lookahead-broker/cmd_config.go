package main

import (
	"github.com/spf13/cobra"

	"lookahead/internal/cli"
)

func newConfigCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "config [-o json|table]",
		Short: "Print the effective configuration (after flags, environment and file): JSON, or a table with where each key was set",
		Long: `Read the configuration as ` + "`run`" + ` would (flags > LOOKAHEAD_* environment >
file > defaults), check it, and print it (secrets left out): as JSON by
default (-o json; it is also a valid config file), or with -o table one
key a line with its value and where it was set (file:line, variable, flag
or default). A bad key or value is an error naming it and where it was
written (exit 2). Nothing is contacted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cli.CheckFormat(output); err != nil {
				return err
			}
			cfg, l, err := readConfig(cmd.Flags())
			for _, w := range l.Warnings {
				cli.Warn(cmd.ErrOrStderr(), cmd, w)
			}
			if err != nil {
				return err
			}
			if _, err := loadWeb(cfg.Web); err != nil { // the files web.* names, as run reads them
				return err
			}
			return cli.PrintConfig(cmd.OutOrStdout(), output, cfg, l)
		},
	}
	addConfigFlags(cmd.Flags())
	cli.AddOutputFlagDefault(cmd, &output, cli.FormatJSON)
	return cmd
}

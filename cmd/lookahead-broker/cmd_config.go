package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"lookahead/internal/cli"
	"lookahead/internal/config"
)

func newConfigCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration (after flags, environment and file) as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd.Flags())
			if err != nil {
				return err
			}
			return runConfig(cmd.Context(), cmd.OutOrStdout(), cfg)
		},
	}
	addConfigFlags(cmd.Flags())
	return cmd
}

func runConfig(_ context.Context, w io.Writer, cfg Config) error {
	return cli.WriteJSON(w, config.Effective(cfg))
}

// Command lookahead-broker is the lookahead broker daemon.
package main

import (
	"context"

	"github.com/spf13/cobra"

	"lookahead/internal/cli"
)

func main() {
	cli.Main("lookahead-broker", func(ctx context.Context) error {
		return newRootCommand().ExecuteContext(ctx)
	})
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "lookahead-broker",
		Short:         "The lookahead broker daemon",
		Version:       cli.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	return root
}

// Command lookahead-agent is the lookahead agent daemon.
package main

import (
	"context"

	"github.com/spf13/cobra"

	"lookahead/internal/cli"
)

func main() {
	cli.Main("lookahead-agent", func(ctx context.Context) error {
		return newRootCommand().ExecuteContext(ctx)
	})
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "lookahead-agent",
		Short:         "The lookahead agent daemon",
		Version:       cli.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	return root
}

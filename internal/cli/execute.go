package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Execute runs root under ctx on the process's arguments. An error cobra
// returns before any command's RunE started — an unknown command or flag,
// a flag value that does not parse, a wrong number of arguments — is a
// UsageError (exit 2) and points at --help. An error is reported as JSON
// when the command line asked for it (JSONRequested), even when the bad
// flag came before -o json.
func Execute(ctx context.Context, root *cobra.Command) error {
	return ExecuteArgs(ctx, root, os.Args[1:])
}

// ExecuteArgs is Execute on the given arguments (tests).
func ExecuteArgs(ctx context.Context, root *cobra.Command, args []string) error {
	started := false
	markStarted(root, &started)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && !started {
		err = UsageError{Err: fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath())}
	}
	if err != nil && cmd != nil && JSONRequested(cmd, args) {
		err = JSONError{Err: err, Command: cmd.CommandPath()}
	}
	return err
}

// markStarted wraps the RunE of c and its subcommands to record that a
// command started.
func markStarted(c *cobra.Command, started *bool) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			*started = true
			return run(cmd, args)
		}
	}
	if run := c.Run; run != nil {
		c.Run = func(cmd *cobra.Command, args []string) {
			*started = true
			run(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		markStarted(sub, started)
	}
}

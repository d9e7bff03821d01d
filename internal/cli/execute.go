package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

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
	strictCompletion(root)
	markStarted(root, &started)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && !started {
		err = UsageError{Err: fmt.Errorf("%w (%ssee '%s --help')", err, argsUsage(cmd, err), cmd.CommandPath())}
	}
	if err != nil && cmd != nil && JSONRequested(cmd, args) {
		err = JSONError{Err: err, Command: cmd.CommandPath()}
	}
	return err
}

// argsUsage is "usage: <use line>; " when err is cobra's complaint about
// the number of arguments ("accepts 1 arg(s), received 0"), which does
// not say what the arguments are.
func argsUsage(cmd *cobra.Command, err error) string {
	if cmd == nil || !strings.Contains(err.Error(), " arg(s)") {
		return ""
	}
	return "usage: " + cmd.UseLine() + "; "
}

// strictCompletion makes "completion" refuse a shell it does not know
// (cobra prints its help and exits 0 for "completion bsh").
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" && c.Run == nil && c.RunE == nil {
			c.Args = cobra.NoArgs
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
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

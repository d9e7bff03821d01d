package main

import (
	"fmt"
	"os"
)

// ensureStateDir creates the agent's state_dir (and its parents) when it
// does not exist yet, as a daemon's state directory is expected to be:
// the accounting and server-log positions, the broker epoch and the grid
// parts are written there, and a missing directory used to stop the agent
// with an error about a temporary file. created says whether it was made.
func ensureStateDir(c Config) (created bool, err error) {
	if c.simulated() || c.StateDir == "" {
		return false, nil
	}
	if _, err := os.Stat(c.StateDir); err == nil {
		return false, nil
	}
	if err := os.MkdirAll(c.StateDir, 0o750); err != nil {
		return false, fmt.Errorf("state_dir %s: %w (create it owned by the agent's user, or set state_dir)", c.StateDir, err)
	}
	return true, nil
}

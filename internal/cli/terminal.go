package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// IsTerminal reports whether w is a character device (a terminal), so
// progress bars and colour are shown only to people, never into pipes.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// ProgressBar returns a callback that redraws a one-line bar such as
// "[#####      ]  12% 120/1000 jobs" on w, at most once per percent. The
// caller ends the line when the work is done. Show it only when
// IsTerminal(w).
func ProgressBar(w io.Writer, unit string) func(done, total int) {
	last := -1
	return func(done, total int) {
		pct := done * 100 / max(total, 1)
		if pct == last && done != total {
			return
		}
		last = pct
		fmt.Fprintf(w, "\r[%-40s] %3d%% %d/%d %s", strings.Repeat("#", pct*40/100), pct, done, total, unit)
	}
}

// Progress modes of --progress.
const (
	ProgressAuto   = "auto"
	ProgressAlways = "always"
	ProgressNever  = "never"
)

// AddProgressFlag adds --progress to cmd, bound to *mode: the same flag
// on every long command (simulate, replay).
func AddProgressFlag(cmd *cobra.Command, mode *string) {
	cmd.Flags().StringVar(mode, "progress", ProgressAuto, "progress bar on stderr: auto (when stderr is a terminal), always, never")
}

// Progress is the --progress bar of a command that counts unit on w (its
// stderr): nil when mode says none; a usage error for an unknown mode.
func Progress(mode string, w io.Writer, unit string) (func(done, total int), error) {
	switch mode {
	case ProgressAlways:
	case ProgressNever:
		return nil, nil
	case ProgressAuto:
		if !IsTerminal(w) {
			return nil, nil
		}
	default:
		return nil, Usagef("--progress %q: must be %s, %s or %s", mode, ProgressAuto, ProgressAlways, ProgressNever)
	}
	return ProgressBar(w, unit), nil
}

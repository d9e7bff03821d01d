package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
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

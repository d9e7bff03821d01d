package cli

import (
	"io"
	"os"
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

package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"lookahead/internal/config"
)

// PrintConfig prints a daemon's effective configuration c, loaded as l:
// JSON (format FormatJSON) or a table of keys, values and where each was
// set. The `config` command of both daemons.
func PrintConfig(w io.Writer, format string, c any, l *config.Loaded) error {
	if format == FormatJSON {
		return WriteJSON(w, config.Effective(c))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	for _, r := range config.EffectiveRows(c, l) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Key, r.Value, r.From)
	}
	return tw.Flush()
}

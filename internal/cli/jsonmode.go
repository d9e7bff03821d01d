package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// JSONRequested reports whether the command line asked for JSON: -o json
// (--output json, -ojson, --output=json) set on cmd, or, when parsing
// stopped before it (a bad flag earlier on the line), among args. A
// command whose output is JSON by default (the daemons' config) prints
// its diagnostics as text unless asked.
func JSONRequested(cmd *cobra.Command, args []string) bool {
	if cmd != nil {
		if f := cmd.Flags().Lookup("output"); f != nil && f.Changed {
			return f.Value.String() == FormatJSON
		}
	}
	for i, a := range args {
		switch a {
		case "--":
			return false
		case "-o", "--output":
			if i+1 < len(args) && args[i+1] == FormatJSON {
				return true
			}
		case "-ojson", "-o=json", "--output=json":
			return true
		}
	}
	return false
}

// Warning is the JSON shape of a warning under -o json (one object a line
// on stderr, as ErrorReport is for errors).
type Warning struct {
	Warning string `json:"warning"`
	Command string `json:"command"`
}

// Warn prints a warning of cmd on w: as a JSON Warning when the command
// line asked for JSON (JSON mode prints only JSON), else as
// "<binary>: warning: <msg>".
func Warn(w io.Writer, cmd *cobra.Command, msg string) {
	if JSONRequested(cmd, os.Args[1:]) {
		b, _ := json.Marshal(Warning{Warning: msg, Command: cmd.CommandPath()})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	fmt.Fprintf(w, "%s: warning: %s\n", cmd.Root().Name(), msg)
}

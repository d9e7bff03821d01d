package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// Output formats of commands that print data.
const (
	FormatTable = "table"
	FormatJSON  = "json"
)

// AddOutputFlag adds -o/--output to cmd, bound to *format.
func AddOutputFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "output", "o", FormatTable, "output format: table or json")
}

// AddOutputFlagDefault is AddOutputFlag with another default (the
// daemons' config commands print JSON unless asked for the table).
func AddOutputFlagDefault(cmd *cobra.Command, format *string, def string) {
	cmd.Flags().StringVarP(format, "output", "o", def, "output format: table or json")
}

// CheckFormat refuses output formats other than table and json.
func CheckFormat(format string) error {
	if format != FormatTable && format != FormatJSON {
		return Usagef("--output %q: must be %q or %q", format, FormatTable, FormatJSON)
	}
	return nil
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// CheckChoices refuses a value of a list flag (--skip, --source) that is
// not one of known, naming the flag and the choices.
func CheckChoices(flag string, got, known []string) error {
	for _, g := range got {
		if !slices.Contains(known, g) {
			return Usagef("%s %q: want some of %s", flag, g, strings.Join(known, ", "))
		}
	}
	return nil
}

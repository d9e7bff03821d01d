package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"
)

// newLogger returns a JSON logger at level with the site and component
// fields every agent log line carries.
func newLogger(w io.Writer, level, site string) (zerolog.Logger, error) {
	if level == "" {
		level = "info"
	}
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	zerolog.TimeFieldFormat = time.RFC3339
	return zerolog.New(w).Level(lvl).With().Timestamp().Str("site", site).Str("component", "lookahead-agent").Logger(), nil
}

package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"
)

// newLogger returns a JSON logger at level. The agent adds the site and
// component fields to its lines; the daemon's own lines add them here.
func newLogger(w io.Writer, level string) (zerolog.Logger, error) {
	if level == "" {
		level = "info"
	}
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	zerolog.TimeFieldFormat = time.RFC3339
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

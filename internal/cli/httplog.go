package cli

import (
	"bytes"
	"log"

	"github.com/rs/zerolog"
)

// HTTPErrorLog is a standard logger for an http.Server's ErrorLog that
// writes each line as a warning into l (a daemon's JSON log), so Go's
// plain-text lines ("http: TLS handshake error from …") never land in it
// as text.
func HTTPErrorLog(l zerolog.Logger, component string) *log.Logger {
	return log.New(httpLog{l.With().Str("component", component).Logger()}, "", 0)
}

type httpLog struct{ l zerolog.Logger }

func (h httpLog) Write(p []byte) (int, error) {
	h.l.Warn().Msg(string(bytes.TrimSpace(p)))
	return len(p), nil
}

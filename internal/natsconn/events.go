package natsconn

import (
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// LogEvents logs nc's disconnections (with the error), reconnections (to
// which server) and its final close on log, replacing any handlers set
// before. A daemon calls it once after Connect: nats.go reconnects on its
// own, and these lines say when the link to the server went and came back.
func LogEvents(nc *nats.Conn, log zerolog.Logger) {
	nc.SetDisconnectErrHandler(func(_ *nats.Conn, err error) {
		log.Warn().Err(err).Msg("nats: disconnected from the server; reconnecting")
	})
	nc.SetReconnectHandler(func(c *nats.Conn) {
		log.Info().Str("server", c.ConnectedUrlRedacted()).Str("server_name", c.ConnectedServerName()).
			Uint64("reconnects", c.Reconnects).Msg("nats: reconnected")
	})
	nc.SetClosedHandler(func(c *nats.Conn) {
		if err := c.LastError(); err != nil {
			log.Warn().Err(err).Msg("nats: connection closed")
		}
	})
}

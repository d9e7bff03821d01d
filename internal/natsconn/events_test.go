package natsconn_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"lookahead/internal/logtest"
	"lookahead/internal/natsconn"
	"lookahead/internal/natsembed"
)

// TestLogEvents: a client whose server goes away and comes back on the
// same address logs the disconnection and the reconnection.
func TestLogEvents(t *testing.T) {
	dir := t.TempDir()
	s, err := natsembed.Start(natsembed.Options{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	port := s.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, natsconn.Config{URL: s.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var buf logtest.Buffer
	reconnected := make(chan struct{})
	natsconn.LogEvents(nc, zerolog.New(&buf))
	log := nc.Opts.ReconnectedCB
	nc.SetReconnectHandler(func(c *nats.Conn) { log(c); close(reconnected) })
	s.Shutdown()
	s, err = natsembed.Start(natsembed.Options{StoreDir: dir, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	select {
	case <-reconnected:
	case <-ctx.Done():
		t.Fatal("no reconnection")
	}
	for _, want := range []string{`"nats: disconnected from the server; reconnecting"`, `"nats: reconnected"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, buf.String())
		}
	}
}

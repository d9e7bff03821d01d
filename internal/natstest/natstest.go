// Package natstest gives a test a real embedded nats-server (natsembed)
// and connections to it, all stopped when the test ends.
package natstest

import (
	"testing"

	"github.com/nats-io/nats.go"

	"lookahead/internal/natsembed"
)

// Server starts an embedded nats-server with JetStream, its store in a
// directory of the test, and shuts it down when the test ends.
func Server(t testing.TB) *natsembed.Server {
	t.Helper()
	return ServerWith(t, natsembed.Options{})
}

// ServerWith is Server started with o (e.g. a ConfigFile); an empty
// StoreDir is the test's.
func ServerWith(t testing.TB, o natsembed.Options) *natsembed.Server {
	t.Helper()
	if o.StoreDir == "" {
		o.StoreDir = t.TempDir()
	}
	srv, err := natsembed.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// Connect connects to srv and closes the connection when the test ends.
func Connect(t testing.TB, srv *natsembed.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Start is Server and one Connect to it.
func Start(t testing.TB) (*natsembed.Server, *nats.Conn) {
	t.Helper()
	srv := Server(t)
	return srv, Connect(t, srv)
}

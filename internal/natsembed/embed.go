// Package natsembed runs a real nats-server with JetStream inside the
// process: the embedded default of the demo and the server of every test.
package natsembed

import (
	"fmt"
	"os"

	"github.com/nats-io/nats-server/v2/server"
)

// Options configure an embedded server. Zero values pick a random loopback
// port and a temporary JetStream directory.
type Options struct {
	Host     string // default 127.0.0.1
	Port     int    // default -1: a random free port
	StoreDir string // JetStream storage; default a new temporary directory
	// ConfigFile, when set, is loaded as a nats-server configuration file
	// (accounts, users, permissions); Host/Port still override it if set.
	ConfigFile string
	// FromConfig takes JetStream on or off as ConfigFile says (a site's
	// leaf node runs none); otherwise JetStream is always on.
	FromConfig bool
}

// Server is a running embedded nats-server.
type Server struct {
	*server.Server
	tempDir string
}

// Start starts the server and waits until it accepts connections.
func Start(o Options) (*Server, error) {
	opts, err := serverOptions(o)
	if err != nil {
		return nil, err
	}
	s := &Server{}
	if opts.StoreDir == "" {
		dir, err := os.MkdirTemp("", "lookahead-nats-")
		if err != nil {
			return nil, fmt.Errorf("embedded nats store dir: %w", err)
		}
		opts.StoreDir, s.tempDir = dir, dir
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		s.cleanup()
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	s.Server = ns
	if err := run(ns); err != nil {
		s.Shutdown()
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	return s, nil
}

func serverOptions(o Options) (*server.Options, error) {
	opts := &server.Options{}
	if o.ConfigFile != "" {
		var err error
		if opts, err = server.ProcessConfigFile(o.ConfigFile); err != nil {
			return nil, fmt.Errorf("nats config %s: %w", o.ConfigFile, err)
		}
	}
	if !o.FromConfig {
		opts.JetStream = true
	}
	opts.NoSigs = true
	if o.Host != "" || opts.Host == "" {
		opts.Host = "127.0.0.1"
		if o.Host != "" {
			opts.Host = o.Host
		}
	}
	if o.Port != 0 || opts.Port == 0 {
		opts.Port = -1
		if o.Port != 0 {
			opts.Port = o.Port
		}
	}
	if o.StoreDir != "" {
		opts.StoreDir = o.StoreDir
	}
	return opts, nil
}

// Shutdown stops the server, waits for it, and removes a temporary store.
func (s *Server) Shutdown() {
	if s.Server != nil {
		s.Server.Shutdown()
		s.Server.WaitForShutdown()
	}
	s.cleanup()
}

func (s *Server) cleanup() {
	if s.tempDir != "" {
		os.RemoveAll(s.tempDir)
	}
}

package main

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"lookahead/broker/daemon"
	"lookahead/broker/web"
	"lookahead/internal/cli"
	"lookahead/internal/config"
	"lookahead/internal/version"
)

// newWeb builds and binds the operators' web view when web.listen is set
// (nil when off): the token file and TLS files are read now, so a bad one
// stops the start with the key named.
func newWeb(cfg WebConfig, b *daemon.Broker, nc *nats.Conn, log zerolog.Logger) (*web.Server, error) {
	if cfg.Listen == "" {
		return nil, nil
	}
	wc := web.Config{Listen: cfg.Listen, Version: version.String()}
	if cfg.TokenFile != "" {
		tok, err := web.ReadToken(cfg.TokenFile)
		if err != nil {
			return nil, cli.UsageError{Err: err}
		}
		wc.Token = tok
	}
	if cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			return nil, cli.UsageError{Err: fmt.Errorf("web.tls_cert_file, web.tls_key_file: %w", err)}
		}
		wc.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	s, err := web.New(wc, b, web.Streams{JS: b.JetStream()})
	if err != nil {
		return nil, cli.UsageError{Err: err}
	}
	if _, err := s.Listen(); err != nil {
		return nil, err
	}
	if wc.TLS == nil && !config.IsLoopback(cfg.Listen) {
		log.Warn().Str("web", s.URL()).Msg("the web view's token crosses the network in clear: set web.tls_cert_file and web.tls_key_file, or reach it through an SSH tunnel")
	}
	return s, nil
}

// checkWeb says whether the web view can start: off, or its address free
// and its token file (when set) strict enough to be read.
func checkWeb(cfg WebConfig) cli.Check {
	if cfg.Listen == "" {
		return cli.Check{Name: "web", OK: true, Detail: "off"}
	}
	if cfg.TokenFile != "" {
		if _, err := web.ReadToken(cfg.TokenFile); err != nil {
			return cli.Check{Name: "web", Detail: err.Error(), Fix: "write one token of 16 or more characters, owned by lookahead-broker, chmod 600"}
		}
	}
	l, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return cli.Check{Name: "web", Detail: fmt.Sprintf("cannot listen on %s: %v", cfg.Listen, err),
			Fix: "is a broker already running? Else choose another web.listen (or off)"}
	}
	l.Close()
	detail := cfg.Listen + " is free"
	if cfg.TokenFile != "" {
		detail += "; token file readable by the broker only"
	}
	return cli.Check{Name: "web", OK: true, Detail: detail}
}

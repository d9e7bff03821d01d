package main

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/rs/zerolog"

	"lookahead/broker/daemon"
	"lookahead/broker/web"
	"lookahead/internal/cli"
	"lookahead/internal/loopback"
	"lookahead/internal/version"
)

// loadWeb reads the web view's local files — the token file (present, a
// regular file, mode 0600 or stricter, one token long enough) and the TLS
// certificate and key (PEM, a pair) — into its configuration, when
// web.listen is set. It runs before anything is contacted (run: before
// NATS; config and check), so a bad file is named first, exit 2.
func loadWeb(cfg WebConfig) (web.Config, error) {
	wc := web.Config{Listen: cfg.Listen, Version: version.String()}
	if cfg.Listen == "" {
		return wc, nil
	}
	if cfg.TokenFile != "" {
		tok, err := web.ReadToken(cfg.TokenFile)
		if err != nil {
			return wc, cli.UsageError{Err: err}
		}
		wc.Token = tok
	}
	if cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			return wc, cli.UsageError{Err: fmt.Errorf("web.tls_cert_file %s, web.tls_key_file %s: %w", cfg.TLSCertFile, cfg.TLSKeyFile, err)}
		}
		wc.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return wc, nil
}

// newWeb builds and binds the operators' web view from what loadWeb read
// (nil when off). The HTTP server's own messages go to the JSON log.
func newWeb(wc web.Config, b *daemon.Broker, log zerolog.Logger) (*web.Server, error) {
	if wc.Listen == "" {
		return nil, nil
	}
	wc.ErrorLog = cli.HTTPErrorLog(log, "web")
	s, err := web.New(wc, b, web.Streams{JS: b.JetStream()})
	if err != nil {
		return nil, cli.UsageError{Err: err}
	}
	if _, err := s.Listen(); err != nil {
		return nil, err
	}
	if wc.TLS == nil && !loopback.Addr(wc.Listen) {
		log.Warn().Str("web", s.URL()).Msg("the web view's token crosses the network in clear: set web.tls_cert_file and web.tls_key_file, or reach it through an SSH tunnel")
	}
	return s, nil
}

// checkWeb says whether the web view can start: off, or its files good
// (the token file strict enough, the TLS pair loads) and its address
// free.
func checkWeb(cfg WebConfig) cli.Check {
	if cfg.Listen == "" {
		return cli.Check{Name: "web", OK: true, Detail: "off"}
	}
	wc, err := loadWeb(cfg)
	if err != nil {
		return cli.Check{Name: "web", Detail: err.Error(),
			Fix: "the token file: one token of 16 or more characters, owned by lookahead-broker, chmod 600; the TLS files: a PEM certificate and its key"}
	}
	l, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return cli.Check{Name: "web", Detail: fmt.Sprintf("cannot listen on %s: %v", cfg.Listen, err),
			Fix: "is a broker already running? Else choose another web.listen (or off)"}
	}
	l.Close()
	detail := cfg.Listen + " is free"
	if wc.Token != "" {
		detail += "; token file readable by the broker only"
	}
	if wc.TLS != nil {
		detail += "; TLS certificate and key load"
	}
	return cli.Check{Name: "web", OK: true, Detail: detail}
}

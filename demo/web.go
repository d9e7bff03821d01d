package demo

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"lookahead/broker/web"
	"lookahead/internal/config"
	"lookahead/internal/version"
)

// startWeb serves the broker's web view on Options.Web (loopback by
// default, so no token) until ctx ends, and prints its address.
func (r *run) startWeb(ctx context.Context, g *errgroup.Group, nc *nats.Conn) error {
	addr, err := config.ListenAddress("web", r.o.Web)
	if err != nil || addr == "" {
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("web view: %w", err)
	}
	s, err := web.New(web.Config{Listen: addr, Version: version.String()}, r.b, web.Streams{JS: js})
	if err != nil {
		return fmt.Errorf("web view: %w", err)
	}
	if _, err := s.Listen(); err != nil {
		return err
	}
	r.p.web(s.URL())
	g.Go(func() error { return s.Run(ctx) })
	return nil
}

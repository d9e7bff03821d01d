package natsconn

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/nats-io/nats.go"
)

// Servers is the list of server URLs to connect to: URLs when set, else
// URL split at commas (nats.DefaultURL when both are empty). Each must be
// a nats://, tls://, ws:// or wss:// URL (or host:port) with a host and a
// port, and none may repeat.
func (c Config) Servers() ([]string, error) {
	list := c.URLs
	key := "nats.urls"
	if len(list) == 0 {
		list, key = strings.Split(c.URL, ","), "nats.url"
		if strings.TrimSpace(c.URL) == "" {
			return []string{nats.DefaultURL}, nil
		}
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if err := checkServer(s); err != nil {
			return nil, fmt.Errorf("%s: %q: %w", key, s, err)
		}
		if seen[s] {
			return nil, fmt.Errorf("%s: %q is listed twice", key, s)
		}
		seen[s] = true
		out = append(out, s)
	}
	return out, nil
}

func checkServer(s string) error {
	if s == "" {
		return fmt.Errorf("empty server URL")
	}
	hostport := s
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Errorf("not a URL: %w", err)
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return fmt.Errorf("scheme %q: want nats, tls, ws or wss", u.Scheme)
		}
		if u.Port() == "" {
			return nil // the scheme's default port
		}
		hostport = u.Host
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("want scheme://host:port or host:port: %w", err)
	}
	if host == "" || port == "" {
		return fmt.Errorf("want a host and a port")
	}
	return nil
}

package natsconn

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
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
			return nil, keyError{key, fmt.Errorf("%q: %w", s, err)}
		}
		if seen[s] {
			return nil, keyError{key, fmt.Errorf("%q is listed twice", s)}
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
		if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("want scheme://host:port, without a path or query")
		}
		if u.Port() == "" {
			return fmt.Errorf("no port: write it, e.g. %s://%s:4222 (NATS listens on 4222 by default)", u.Scheme, u.Hostname())
		}
		hostport = u.Host
	} else if strings.ContainsAny(s, "/@") {
		return fmt.Errorf("want scheme://host:port (e.g. nats://nats1:4222) or host:port")
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("want scheme://host:port (e.g. nats://nats1:4222) or host:port: %w", err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("port %q: want a number in 1-65535 (NATS listens on 4222 by default)", port)
	}
	if !validHost(host) {
		return fmt.Errorf("host %q: want a host name or an IP address", host)
	}
	return nil
}

// validHost accepts an IP address or a DNS name (letters, digits, '-'
// and '.', labels of 1-63 bytes, at most 253 bytes).
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

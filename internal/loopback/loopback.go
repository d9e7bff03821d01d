// Package loopback says whether an address or a host name stays on this
// machine. It depends on the standard library only, so the web view (and
// anything else that needs the one rule) does not carry the configuration
// loader with it.
package loopback

import (
	"net"
	"strings"
)

// Addr reports whether a listen address (host:port) binds only the
// loopback interface (127.0.0.0/8, ::1 or localhost); an empty host binds
// every interface and is not loopback, nor is anything that is not
// host:port.
func Addr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return Host(host)
}

// Host reports whether a host name or address ("localhost", "127.0.0.1",
// "::1" or "[::1]") names this machine's loopback interface.
func Host(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

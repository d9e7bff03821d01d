package config

import (
	"fmt"
	"net"
	"strconv"
)

// ListenOff is the value that turns a listener off, the same for every
// listen address of every daemon (metrics.listen, web.listen, …); the
// empty string means off too.
const ListenOff = "off"

// ListenAddress is the one rule for every optional listener's address:
// "" and "off" turn it off (returned as ""), anything else must be
// host:port with a port in 0–65535 (host may be empty for every
// interface). key names the setting in the error.
func ListenAddress(key, value string) (string, error) {
	if value == "" || value == ListenOff {
		return "", nil
	}
	_, port, err := net.SplitHostPort(value)
	if err != nil {
		return "", fmt.Errorf("%s: %q is not host:port or %q: %w", key, value, ListenOff, err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (port != "0" && n == 0) {
		return "", fmt.Errorf("%s: %q: port %q is not a number in 0-65535", key, value, port)
	}
	return value, nil
}

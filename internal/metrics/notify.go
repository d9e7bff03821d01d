package metrics

import (
	"net"
	"os"
	"strings"
)

// sdNotify sends state to systemd's notification socket ($NOTIFY_SOCKET,
// set by systemd for units with NotifyAccess=), so that readiness shows in
// `systemctl status` as STATUS= text, and Type=notify units start when
// ready. Without the variable it does nothing; failures are ignored
// because notification is advisory.
func sdNotify(state string) {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return
	}
	if strings.HasPrefix(path, "@") {
		path = "\x00" + path[1:] // abstract socket
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return
	}
	defer conn.Close()
	conn.Write([]byte(state))
}

package metrics

import (
	"net"
	"path/filepath"
	"testing"
	"time"
)

func TestReadinessIsToldToSystemd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Skipf("no unixgram sockets here: %v", err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", path)

	s := &Server{}
	s.SetNotReady("nats disconnected")
	s.SetReady()
	for _, want := range []string{"STATUS=not ready: nats disconnected", "READY=1\nSTATUS=ready"} {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 256)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("reading the notification: %v", err)
		}
		if got := string(buf[:n]); got != want {
			t.Errorf("notification %q, want %q", got, want)
		}
	}
}

func TestNoNotifySocketIsFine(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	s := &Server{}
	s.SetReady()
	if ok, _ := s.Ready(); !ok {
		t.Fatal("not ready after SetReady")
	}
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "missing.sock"))
	s.SetNotReady("x") // must not fail or block
}

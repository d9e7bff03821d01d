package torque

import (
	"context"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// capturedCodes reads the hex bytes pbs_server sent, one connection per
// line, from a captured sched-port dump.
func capturedCodes(t *testing.T, dir string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, line := range readLines(t, filepath.Join("testdata", dir, "sched-port-15004", "sched_port_15004_dump.txt")) {
		for _, f := range strings.Fields(line) {
			if h, ok := strings.CutPrefix(f, "hex="); ok {
				b, err := hex.DecodeString(h)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no captured connections", dir)
	}
	return out
}

type listenerHarness struct {
	l      *Listener
	mu     sync.Mutex
	codes  []SchedCmd
	cancel context.CancelFunc
	done   chan error
}

func startListener(t *testing.T, cfg ListenerConfig) *listenerHarness {
	t.Helper()
	h := &listenerHarness{done: make(chan error, 1)}
	cfg.Addr = "127.0.0.1:0"
	l, err := NewListener(cfg, func(_ context.Context, ev Event) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if ev.Kind != SchedulerNotified || ev.Source != SourceSchedPort {
			t.Errorf("event %+v", ev)
		}
		h.codes = append(h.codes, ev.Code)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h.l = l
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-h.done; err != nil {
			t.Error(err)
		}
	})
	return h
}

// send opens one connection, writes the chunks with a pause between them,
// half-closes and waits for the listener to close; localPort 0 lets the kernel pick.
func send(t *testing.T, addr net.Addr, localPort int, pause time.Duration, chunks ...[]byte) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if localPort != 0 {
		d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: localPort}
	}
	c, err := d.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, b := range chunks {
		time.Sleep(pause)
		if _, err := c.Write(b); err != nil {
			return // the listener may have closed already
		}
	}
	c.(*net.TCPConn).CloseWrite() // done sending, as pbs_server is
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var one [1]byte
	c.Read(one[:]) // wait for the listener to close its side
}

// waitFor polls a counter until it reaches n (no timed assertions: the
// deadline only bounds a hang).
func waitFor(t *testing.T, what string, get func() int64, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if get() >= n {
			return
		}
	}
	t.Fatalf("%s: %d, want %d", what, get(), n)
}

func TestListenerCapturedSequences(t *testing.T) {
	for _, v := range versions {
		t.Run(v.dir, func(t *testing.T) {
			h := startListener(t, ListenerConfig{Servers: []string{"127.0.0.1"}, MaxSourcePort: 65535})
			seqs := capturedCodes(t, v.dir)
			for _, b := range seqs {
				send(t, h.l.Addr(), 0, 0, b)
			}
			waitFor(t, "events", h.l.Stats().Events.Load, int64(len(seqs)))
			h.mu.Lock()
			defer h.mu.Unlock()
			for i, b := range seqs {
				want := SchedCmd(int32(b[0])<<24 | int32(b[1])<<16 | int32(b[2])<<8 | int32(b[3]))
				if h.codes[i] != want || !want.Known() {
					t.Errorf("connection %d: got %v, want %v", i, h.codes[i], want)
				}
			}
			if h.codes[0] != SchedFirst {
				t.Errorf("first notification %v, the captures start with FIRST", h.codes[0])
			}
		})
	}
}

func TestListenerBadClients(t *testing.T) {
	h := startListener(t, ListenerConfig{Servers: []string{"127.0.0.1"}, MaxSourcePort: 65535,
		ReadTimeout: 300 * time.Millisecond})
	addr := h.l.Addr()
	send(t, addr, 0, 0)                                                       // connects, sends nothing, closes
	send(t, addr, 0, 0, []byte{0, 0})                                         // short
	send(t, addr, 0, 0, []byte{0xde, 0xad, 0xbe, 0xef})                       // unknown code
	send(t, addr, 0, 0, []byte("GET / HTTP/1.0\r\n\r\n"))                     // garbage
	send(t, addr, 0, 20*time.Millisecond, []byte{0, 0}, []byte{0}, []byte{2}) // slow but in time: TERM
	// Too slow: opens and stays silent past the read timeout.
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := h.l.Stats()
	waitFor(t, "timeouts", st.Timeouts.Load, 1)
	waitFor(t, "events", st.Events.Load, 1)
	if st.Empty.Load() != 1 || st.Garbage.Load() != 3 || st.Events.Load() != 1 {
		t.Fatalf("empty %d garbage %d events %d", st.Empty.Load(), st.Garbage.Load(), st.Events.Load())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.codes) != 1 || h.codes[0] != SchedTerm {
		t.Fatalf("codes %v", h.codes)
	}
}

func TestListenerRefusesStrangers(t *testing.T) {
	// Only 127.0.0.2 is the server: a client on 127.0.0.1 is refused.
	h := startListener(t, ListenerConfig{Servers: []string{"127.0.0.2"}, MaxSourcePort: 65535})
	send(t, h.l.Addr(), 0, 0, []byte{0, 0, 0, 1})
	waitFor(t, "refused", h.l.Stats().Refused.Load, 1)

	// From the right host but an unprivileged port: refused.
	h2 := startListener(t, ListenerConfig{Servers: []string{"127.0.0.1"}})
	send(t, h2.l.Addr(), 0, 0, []byte{0, 0, 0, 1})
	waitFor(t, "refused", h2.l.Stats().Refused.Load, 1)
	if h2.l.Stats().Events.Load() != 0 {
		t.Fatal("event from an unprivileged port")
	}
	if os.Geteuid() != 0 {
		t.Skip("binding a privileged source port needs root")
	}
	// From a privileged port, as Torque does (2.5.13 used 654): accepted.
	sendFromPrivilegedPort(t, h2.l.Addr(), []byte{0, 0, 0, 10})
	waitFor(t, "events", h2.l.Stats().Events.Load, 1)
}

func TestNewListenerNeedsServers(t *testing.T) {
	if _, err := NewListener(ListenerConfig{Addr: "127.0.0.1:0"}, nil); err == nil {
		t.Fatal("accepted without servers")
	}
}

// sendFromPrivilegedPort sends b from the first privileged source port
// the dial can bind: a port free to listen on may still be some other
// connection's source port (pbs_server, pbs_mom and trqauthd use them).
func sendFromPrivilegedPort(t *testing.T, addr net.Addr, b []byte) {
	t.Helper()
	for p := 600 + time.Now().Nanosecond()%300; p < 1024; p++ {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p}}
		c, err := d.Dial("tcp", addr.String())
		if err != nil {
			continue
		}
		c.Write(b)
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var one [1]byte
		c.Read(one[:])
		c.Close()
		return
	}
	t.Skip("no free privileged source port")
}

// Torque 2.5.13 writes its 4 bytes and leaves the connection open (the
// capture's listener waited 5 s for it to close). The listener must take
// the command and close at once, not wait for the server.
func TestListenerClosesAfterCommandLike2513(t *testing.T) {
	h := startListener(t, ListenerConfig{Servers: []string{"127.0.0.1"}, MaxSourcePort: 65535, ReadTimeout: time.Hour})
	c, err := net.Dial("tcp", h.l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(capturedCodes(t, "torque-2.5.13")[0]); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second)) // bounds a hang only
	var b [1]byte
	if n, err := c.Read(b[:]); n != 0 || err == nil || isTimeout(err) {
		t.Fatalf("listener did not close the connection: n=%d err=%v", n, err)
	}
	waitFor(t, "events", h.l.Stats().Events.Load, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.codes[0] != SchedFirst {
		t.Fatalf("got %v", h.codes)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

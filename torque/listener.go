package torque

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ListenerConfig configures a Listener.
type ListenerConfig struct {
	// Addr is where to listen, e.g. "127.0.0.1:15005": the address given
	// to pbs_server with -l (Maui itself holds 15004).
	Addr string
	// Servers are the pbs_server hosts allowed to connect (IP addresses
	// or names, resolved once by NewListener). Required.
	Servers []string
	// MaxSourcePort is the highest source port accepted (default 1023:
	// pbs_server connects from a privileged port). Set to 65535 only to
	// test without root.
	MaxSourcePort int
	// ReadTimeout bounds the wait for the 4 bytes (default 5 s).
	ReadTimeout time.Duration
	// MaxConns bounds connections served at once (default 64); more wait
	// in the kernel's backlog.
	MaxConns int
	// Now is the clock for event times (default time.Now).
	Now func() time.Time
}

// ListenerStats are counters, safe to read at any time.
type ListenerStats struct {
	Accepted, Events   atomic.Int64
	Refused            atomic.Int64 // not from a configured server or privileged port
	Empty, Garbage     atomic.Int64 // closed with no byte; short or unknown code
	Timeouts, Handlers atomic.Int64 // read timed out; handler errors
}

// Listener receives pbs_server's scheduler notifications: one TCP
// connection per event, carrying a 4-byte big-endian command (SchedCmd).
// It reads the 4 bytes and closes the connection at once (Torque 2.5 keeps
// it open otherwise and sends nothing else until it closes). Handler calls
// are serialized.
type Listener struct {
	cfg     ListenerConfig
	ln      net.Listener
	allowed map[string]bool
	handle  Handler
	mu      sync.Mutex // serializes handler calls
	stats   ListenerStats
}

// NewListener resolves the allowed servers and binds the address.
func NewListener(cfg ListenerConfig, h Handler) (*Listener, error) {
	if len(cfg.Servers) == 0 {
		return nil, errors.New("sched listener: no pbs_server addresses configured")
	}
	cfg = cfg.withDefaults()
	allowed, err := resolveAll(cfg.Servers)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("sched listener on %s: %w", cfg.Addr, err)
	}
	return &Listener{cfg: cfg, ln: ln, allowed: allowed, handle: h}, nil
}

func (c ListenerConfig) withDefaults() ListenerConfig {
	if c.MaxSourcePort <= 0 {
		c.MaxSourcePort = 1023
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = 5 * time.Second
	}
	if c.MaxConns <= 0 {
		c.MaxConns = 64
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func resolveAll(hosts []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			out[ip.String()] = true
			continue
		}
		addrs, err := net.LookupHost(h)
		if err != nil {
			return nil, fmt.Errorf("sched listener: pbs_server %q: %w", h, err)
		}
		for _, a := range addrs {
			out[net.ParseIP(a).String()] = true
		}
	}
	return out, nil
}

// Addr is the bound address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Stats returns the counters.
func (l *Listener) Stats() *ListenerStats { return &l.stats }

// Run serves until ctx is done, then closes the socket, waits for the
// connections in progress and returns nil. A handler error is counted and
// does not stop the listener (a notification is only a hint).
func (l *Listener) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { l.ln.Close() })
	defer stop()
	sem := make(chan struct{}, l.cfg.MaxConns)
	for {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		conn, err := l.ln.Accept()
		if err != nil {
			<-sem
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("sched listener on %s: %w", l.ln.Addr(), err)
		}
		l.stats.Accepted.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			l.serve(ctx, conn)
		}()
	}
}

func (l *Listener) serve(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	if !l.permitted(conn.RemoteAddr()) {
		l.stats.Refused.Add(1)
		return
	}
	conn.SetReadDeadline(time.Now().Add(l.cfg.ReadTimeout))
	code, err := ReadSchedCmd(conn)
	if err != nil {
		l.countReadError(err)
		return
	}
	ev := Event{Time: l.cfg.Now().UTC(), Kind: SchedulerNotified, Source: SourceSchedPort, Code: code}
	l.mu.Lock()
	err = l.handle(ctx, ev)
	l.mu.Unlock()
	if err != nil {
		l.stats.Handlers.Add(1)
		return
	}
	l.stats.Events.Add(1)
}

func (l *Listener) permitted(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && l.allowed[ta.IP.String()] && ta.Port <= l.cfg.MaxSourcePort
}

// Errors of ReadSchedCmd.
var (
	ErrNoCommand  = errors.New("connection closed without a command")
	ErrBadCommand = errors.New("not a scheduler command")
)

func (l *Listener) countReadError(err error) {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		l.stats.Timeouts.Add(1)
	case errors.Is(err, ErrNoCommand):
		l.stats.Empty.Add(1)
	default:
		l.stats.Garbage.Add(1)
	}
}

// ReadSchedCmd reads one 4-byte big-endian scheduler command.
func ReadSchedCmd(r io.Reader) (SchedCmd, error) {
	var b [4]byte
	n, err := io.ReadFull(r, b[:])
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return 0, ErrNoCommand
	case errors.Is(err, io.ErrUnexpectedEOF):
		return 0, fmt.Errorf("%w: %d of 4 bytes", ErrBadCommand, n)
	case err != nil:
		return 0, err
	}
	code := SchedCmd(int32(binary.BigEndian.Uint32(b[:])))
	if !code.Known() {
		return 0, fmt.Errorf("%w: %08x", ErrBadCommand, b)
	}
	return code, nil
}

package metrics

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server exposes a registry on /metrics, liveness on /healthz and
// readiness on /readyz. Set the fields before calling Listen or Run; the
// zero readiness is "not ready: starting". Safe for concurrent use.
type Server struct {
	// Addr is host:port to listen on, e.g. "127.0.0.1:9464". Empty means
	// the listener is off: Run then just waits for its context.
	Addr string
	// Gatherer is what /metrics serves; nil means prometheus.DefaultGatherer.
	Gatherer prometheus.Gatherer
	// ShutdownTimeout bounds the graceful shutdown when Run's context ends;
	// 0 means 5 s.
	ShutdownTimeout time.Duration
	// ErrorLog is where the HTTP server logs what it cannot serve (nil:
	// the standard logger, plain text on stderr); the daemons pass their
	// JSON log.
	ErrorLog *log.Logger

	mu       sync.Mutex
	ln       net.Listener
	ready    bool
	reason   string
	reasonOK bool // reason was set at least once
}

// SetReady marks the daemon ready: /readyz answers 200, and systemd (when
// it set NOTIFY_SOCKET) is told READY=1 with STATUS=ready.
func (s *Server) SetReady() {
	s.mu.Lock()
	s.ready, s.reason, s.reasonOK = true, "", true
	s.mu.Unlock()
	sdNotify("READY=1\nSTATUS=ready")
}

// SetNotReady marks the daemon not ready for reason (e.g. "nats
// disconnected"): /readyz answers 503 with the reason, which systemd also
// shows as STATUS= text.
func (s *Server) SetNotReady(reason string) {
	s.mu.Lock()
	s.ready, s.reason, s.reasonOK = false, reason, true
	s.mu.Unlock()
	sdNotify("STATUS=not ready: " + reason)
}

// Ready reports the readiness /readyz would answer and its reason.
func (s *Server) Ready() (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.reasonOK {
		return false, "starting"
	}
	return s.ready, s.reason
}

// Listen binds Addr now, so a daemon can fail fast on a taken port and a
// test can learn the port of "127.0.0.1:0". It returns the bound address,
// or nil when Addr is empty. Calling it again returns the same address.
func (s *Server) Listen() (net.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Addr == "" {
		return nil, nil
	}
	if s.ln == nil {
		ln, err := net.Listen("tcp", s.Addr)
		if err != nil {
			return nil, fmt.Errorf("metrics listener on %s: %w", s.Addr, err)
		}
		s.ln = ln
	}
	return s.ln.Addr(), nil
}

// Run serves until ctx ends, then shuts down gracefully and returns nil;
// it binds Addr first if Listen was not called. With an empty Addr it
// waits for ctx and returns nil.
func (s *Server) Run(ctx context.Context) error {
	addr, err := s.Listen()
	if err != nil {
		return err
	}
	if addr == nil {
		<-ctx.Done()
		return nil
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: s.ErrorLog}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("metrics server on %s: %w", addr, err)
	case <-ctx.Done():
	}
	timeout := s.ShutdownTimeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("metrics server on %s: shutdown: %w", addr, err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics server on %s: %w", addr, err)
	}
	return nil
}

// Handler is the server's HTTP handler, for mounting elsewhere.
func (s *Server) Handler() http.Handler {
	g := s.Gatherer
	if g == nil {
		g = prometheus.DefaultGatherer
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, reason := s.Ready()
		if ok {
			writeText(w, http.StatusOK, "ready")
			return
		}
		writeText(w, http.StatusServiceUnavailable, "not ready: "+reason)
	})
	return mux
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	fmt.Fprintln(w, body)
}

package web

import (
	"context"
	"crypto/tls"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/http"
	"time"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

//go:embed assets
var assets embed.FS

// Broker is what the page reads of a running broker (broker/daemon's
// Broker): read-only views, each taken under the broker's lock.
type Broker interface {
	Sites() wire.SitesReply
	SiteForecasts() []broker.Site
	// Jobs renders the jobs keep accepts, in submission order: the first
	// limit (≤ 0: all), how many keep accepted, how many are held, and
	// the broker's now (daemon.Broker.Jobs).
	Jobs(keep func(j *broker.Job, plan *forecast.Allocation) bool, limit int) (jobs []wire.JobStatus, found, total int, now int64)
	Plan() wire.Plan
	// HAStatus is the broker's role (active or standby) and which broker
	// is active.
	HAStatus() wire.HAStatus
	// AgentStatus is the status site's agent answers (its local queue
	// with predicted starts among it), asked now.
	AgentStatus(ctx context.Context, site string) ([]byte, error)
}

// Config is the web view's: where it listens and how operators prove
// who they are.
type Config struct {
	// Listen is host:port ("" is off: see config.ListenAddress).
	Listen string
	// Token, when set, must be presented by every request (see ReadToken).
	Token string
	// TLS, when set, serves HTTPS (the token then never crosses the
	// network in clear).
	TLS *tls.Config
	// Version is shown in the page's header.
	Version string
	// ErrorLog is where the HTTP server logs what it cannot serve (a
	// failed TLS handshake); nil: the standard logger (plain text on
	// stderr). The broker passes its JSON log.
	ErrorLog *log.Logger
}

// Server is the web view's HTTP server.
type Server struct {
	cfg     Config
	b       Broker
	streams Streams
	audit   *AuditTail
	stop    context.CancelFunc // ends what outlives a request (the audit follower)
	ln      net.Listener
	srv     *http.Server
}

// New checks cfg (a non-loopback address needs a token) and returns the
// server; Listen binds it.
func New(cfg Config, b Broker, streams Streams) (*Server, error) {
	if err := CheckExposure(cfg.Listen, cfg.Token != ""); err != nil {
		return nil, err
	}
	life, stop := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, b: b, streams: streams, audit: streams.FollowAudit(life, AuditTailRecords), stop: stop}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: time.Minute, TLSConfig: cfg.TLS, ErrorLog: cfg.ErrorLog}
	return s, nil
}

// Listen binds the address and returns the one bound (port 0 picks one).
func (s *Server) Listen() (string, error) {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return "", fmt.Errorf("web.listen %s: %w", s.cfg.Listen, err)
	}
	s.ln = ln
	return ln.Addr().String(), nil
}

// URL is the page's address once bound.
func (s *Server) URL() string {
	scheme := "http"
	if s.cfg.TLS != nil {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s/", scheme, s.ln.Addr().String())
}

// Run serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	defer s.stop()
	if s.ln == nil {
		if _, err := s.Listen(); err != nil {
			return err
		}
	}
	errc := make(chan error, 1)
	go func() {
		if s.cfg.TLS != nil {
			errc <- s.srv.ServeTLS(s.ln, "", "")
		} else {
			errc <- s.srv.Serve(s.ln)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("web: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.srv.Shutdown(sctx)
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("web: %w", err)
		}
		return nil
	}
}

// Handler is the page and its API behind the access checks.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /{$}", fileHandler(static, "index.html"))
	mux.Handle("GET /app.js", fileHandler(static, "app.js"))
	mux.Handle("GET /app.css", fileHandler(static, "app.css"))
	mux.Handle("GET /favicon.svg", fileHandler(static, "favicon.svg"))
	mux.HandleFunc("GET /api/overview", s.apiOverview)
	mux.HandleFunc("GET /api/jobs", s.apiJobs)
	mux.HandleFunc("GET /api/jobs/{id}/events", s.apiJobEvents)
	mux.HandleFunc("GET /api/gantt", s.apiGantt)
	mux.HandleFunc("GET /api/sites/{site}/queue", s.apiLocalQueue)
	mux.HandleFunc("GET /api/audit", s.apiAudit)
	return s.guard(mux)
}

func fileHandler(static fs.FS, name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, name)
	})
}

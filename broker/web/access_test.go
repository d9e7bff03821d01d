package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// TestCheckExposure: loopback needs nothing; any other address (every
// interface included) needs a token.
func TestCheckExposure(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:9466": true, "[::1]:9466": true, "localhost:9466": true,
		":9466": false, "0.0.0.0:9466": false, "10.0.0.5:9466": false} {
		if err := CheckExposure(addr, false); (err == nil) != ok {
			t.Errorf("%s without token: %v", addr, err)
		}
		if err := CheckExposure(addr, true); err != nil {
			t.Errorf("%s with token: %v", addr, err)
		}
	}
}

// TestReadToken: a token file group or others may read is refused, as is
// a short one; a 0600 file is read without its trailing newline.
func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	if tok, err := ReadToken(write("ok", "0123456789abcdef0123\n", 0o600)); err != nil || tok != "0123456789abcdef0123" {
		t.Errorf("0600: %q %v", tok, err)
	}
	if _, err := ReadToken(write("open", "0123456789abcdef0123\n", 0o640)); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("0640: %v", err)
	}
	if _, err := ReadToken(write("short", "abc\n", 0o600)); err == nil {
		t.Error("short token taken")
	}
	if _, err := ReadToken(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file taken")
	}
	if _, err := ReadToken(dir); err == nil {
		t.Error("directory taken")
	}
}

// fakeBroker is a fixed broker state for handler tests.
type fakeBroker struct{}

func (fakeBroker) HAStatus() wire.HAStatus {
	l := &wire.Leadership{Broker: "b1", Epoch: 7, Since: 50}
	return wire.HAStatus{Name: "b1", Role: wire.RoleActive, Epoch: 7, Since: 50, Leader: l}
}
func (fakeBroker) Sites() wire.SitesReply {
	return wire.SitesReply{Now: 100, TTL: 300, Sites: []wire.SiteStatus{{Site: "a", Nodes: 1}}}
}
func (fakeBroker) SiteForecasts() []broker.Site {
	return []broker.Site{{Name: "a", Forecast: forecast.Forecast{Site: "a", Horizon: 1000,
		Nodes: []forecast.Node{{Name: "a1", Procs: 2}}, Slots: []forecast.Slot{{Node: "a1", Procs: 2, Start: 0, End: 1000, Price: 1}}}}}
}
func (fakeBroker) Jobs(func(*broker.Job, *forecast.Allocation) bool, int) ([]wire.JobStatus, int, int, int64) {
	return []wire.JobStatus{}, 0, 0, 100
}
func (fakeBroker) AgentStatus(_ context.Context, site string) ([]byte, error) {
	if site != "a" {
		return nil, errors.New("nats: no responders available for request")
	}
	return []byte(`{"site":"a","revision":3,"generated":90,"queue":[{"job":"7.a","user":"bob","procs":4,"walltime":600,"submitted":50,"predicted_start":400}],"queue_total":12}`), nil
}
func (fakeBroker) Plan() wire.Plan { return wire.Plan{} }

func serve(t *testing.T, s *Server, method, target string, mod func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	r.Host = "127.0.0.1:9466"
	if mod != nil {
		mod(r)
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

// TestGuardHeadersAndReadOnly: every answer carries the security
// headers; anything but GET/HEAD is refused; a foreign Host is refused
// when no token protects the view.
func TestGuardHeadersAndReadOnly(t *testing.T) {
	s, err := New(Config{Listen: "127.0.0.1:9466"}, fakeBroker{}, Streams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/app.js", "/app.css", "/api/overview", "/api/gantt?site=a"} {
		w := serve(t, s, "GET", path, nil)
		h := w.Result().Header
		if w.Code != 200 || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: %d %v", path, w.Code, h)
		}
	}
	if w := serve(t, s, "GET", "/api/overview", nil); !strings.Contains(w.Body.String(), `"active":true`) || w.Result().Header.Get("Content-Type") != "application/json" {
		t.Errorf("overview %s", w.Body)
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		if w := serve(t, s, m, "/api/overview", nil); w.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", m, w.Code)
		}
	}
	if w := serve(t, s, "GET", "/api/overview", func(r *http.Request) { r.Host = "evil.example:9466" }); w.Code != http.StatusForbidden {
		t.Errorf("rebound host: %d", w.Code)
	}
	if w := serve(t, s, "GET", "/api/gantt?site=nope", nil); w.Code != http.StatusNotFound {
		t.Errorf("unknown site: %d", w.Code)
	}
	if w := serve(t, s, "GET", "/api/jobs/a%20b/events", nil); w.Code != http.StatusBadRequest {
		t.Errorf("bad job id: %d", w.Code)
	}
}

// TestGuardToken: with a token, a request without it is refused; the
// token in the query sets an HttpOnly cookie and redirects it away; the
// cookie or a Bearer header then pass.
func TestGuardToken(t *testing.T) {
	const tok = "0123456789abcdef0123"
	if _, err := New(Config{Listen: "0.0.0.0:9466"}, fakeBroker{}, Streams{}); err == nil {
		t.Fatal("non-loopback without a token accepted")
	}
	s, err := New(Config{Listen: "0.0.0.0:9466", Token: tok}, fakeBroker{}, Streams{})
	if err != nil {
		t.Fatal(err)
	}
	if w := serve(t, s, "GET", "/api/overview", nil); w.Code != http.StatusUnauthorized {
		t.Errorf("no token: %d", w.Code)
	}
	if w := serve(t, s, "GET", "/?token=wrong-wrong-wrong-wrong", nil); w.Code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", w.Code)
	}
	w := serve(t, s, "GET", "/?token="+tok, nil)
	c := w.Result().Cookies()
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/" || len(c) != 1 || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("token in query: %d %q %+v", w.Code, w.Header().Get("Location"), c)
	}
	if w := serve(t, s, "GET", "/api/overview", func(r *http.Request) { r.AddCookie(c[0]) }); w.Code != 200 {
		t.Errorf("cookie: %d", w.Code)
	}
	if w := serve(t, s, "GET", "/api/overview", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }); w.Code != 200 {
		t.Errorf("bearer: %d", w.Code)
	}
	if w := serve(t, s, "GET", "/api/overview", func(r *http.Request) {
		r.Host = "grid-broker.example:9466"
		r.Header.Set("Authorization", "Bearer "+tok)
	}); w.Code != 200 {
		t.Errorf("own host name with token: %d", w.Code)
	}
}

// TestGuardBase64Token: a standard base64 token (+, / and =, what
// `head -c 24 /dev/urandom | base64` writes) passes in the query string
// as pasted (a "+" is not read as a space) and escaped, in the header,
// and in the cookie the first visit sets; a token that cannot travel is
// refused when the file is read, naming the character.
func TestGuardBase64Token(t *testing.T) {
	const tok = "q+3/Zx+Lm0/w7Q+aB9c/kP2e="
	s, err := New(Config{Listen: "0.0.0.0:9466", Token: tok}, fakeBroker{}, Streams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{tok, url.QueryEscape(tok), strings.ReplaceAll(tok, "+", "%2B")} {
		w := serve(t, s, "GET", "/?token="+q+"&x=1", nil)
		c := w.Result().Cookies()
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/?x=1" || len(c) != 1 || c[0].Value != tok {
			t.Fatalf("?token=%s: %d %q %+v", q, w.Code, w.Header().Get("Location"), c)
		}
		if w := serve(t, s, "GET", "/api/overview", func(r *http.Request) { r.AddCookie(c[0]) }); w.Code != 200 {
			t.Errorf("cookie of ?token=%s: %d", q, w.Code)
		}
	}
	if w := serve(t, s, "GET", "/api/overview", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }); w.Code != 200 {
		t.Errorf("bearer: %d", w.Code)
	}
	if w := serve(t, s, "GET", "/?token="+strings.ReplaceAll(tok, "+", "%20"), nil); w.Code != http.StatusUnauthorized {
		t.Errorf("token with spaces for its pluses: %d", w.Code)
	}
	dir := t.TempDir()
	for body, bad := range map[string]string{tok + "\n": "", "0123456789abcdef;0123": "';'", "0123456789abcdef%41bc": "'%'", "0123456789abcdéf01": "'é'"} {
		p := filepath.Join(dir, "tok")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadToken(p)
		if bad == "" && (err != nil || got != tok) {
			t.Errorf("%q: %q %v", body, got, err)
		}
		if bad != "" && (err == nil || !strings.Contains(err.Error(), bad)) {
			t.Errorf("%q: %v, want it refused naming %s", body, err, bad)
		}
	}
}

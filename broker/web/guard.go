package web

import "net/http"

// csp lets the page run only its own script and style and talk only to
// its own origin; no inline script, no frames.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// guard sets the security headers, serves GET and HEAD only, and checks
// who asks: the token when one is configured, else a loopback Host (a
// page elsewhere rebinding its name to 127.0.0.1 is refused).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the web view is read-only", http.StatusMethodNotAllowed)
			return
		}
		if s.cfg.Token == "" {
			if !hostAllowed(r.Host, s.cfg.Listen) {
				http.Error(w, "host not allowed: open the page by its loopback address", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		fromQuery, err := checkToken(r, s.cfg.Token)
		if err != nil {
			h.Set("WWW-Authenticate", `Bearer realm="lookahead"`)
			http.Error(w, "token required: open the page as /?token=<the token in web.token_file>, or send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		if fromQuery {
			// Keep the token in an HttpOnly cookie and drop it from the
			// address bar (and from history).
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.cfg.Token, Path: "/", HttpOnly: true,
				Secure: s.cfg.TLS != nil, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

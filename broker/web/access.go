package web

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"lookahead/internal/loopback"
)

// MinTokenBytes is the shortest token a token file may hold.
const MinTokenBytes = 16

// CheckExposure refuses to serve addr beyond loopback without a token:
// the page shows every user's jobs and every site's future.
func CheckExposure(addr string, haveToken bool) error {
	if loopback.Addr(addr) || haveToken {
		return nil
	}
	return fmt.Errorf("web.listen %q is not a loopback address: set web.token_file (a file only the broker's user can read) or bind 127.0.0.1", addr)
}

// ReadToken reads the operators' token from path: the file must be a
// regular file that neither group nor others may read or write, and hold
// at least MinTokenBytes bytes (surrounding white space ignored) of
// characters that travel unchanged in ?token= and a cookie.
func ReadToken(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("web.token_file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("web.token_file %s: not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("web.token_file %s: mode %04o lets group or others read it: chmod 600", path, perm)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("web.token_file: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if len(tok) < MinTokenBytes || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("web.token_file %s: want one token of at least %d characters without spaces", path, MinTokenBytes)
	}
	if i := strings.IndexFunc(tok, untravelled); i >= 0 {
		return "", fmt.Errorf("web.token_file %s: the token holds %q, which an address's ?token= or a cookie cannot carry as typed: use letters, digits and - _ . ~ + / = (head -c 24 /dev/urandom | base64 | tr '+/' '-_')", path, []rune(tok[i:])[0])
	}
	return tok, nil
}

// untravelled are the characters a token cannot hold: they would not
// reach the broker unchanged in ?token= (%, &, #) or in the cookie
// (", ;, \, a comma), or are not printable ASCII. A standard base64
// token (+, /, =) travels.
func untravelled(r rune) bool {
	return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"#%&,;\`, r)
}

// cookieName carries the token once the operator has opened the page
// with ?token=.
const cookieName = "lookahead_web_token"

var errNoToken = errors.New("no valid token")

// tokenOf is the token a request presents: the Authorization: Bearer
// header, the cookie, or the token query parameter (the first visit).
func tokenOf(r *http.Request) (tok string, fromQuery bool) {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimPrefix(h, "Bearer "), false
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return c.Value, false
	}
	if q := queryToken(r.URL.RawQuery); q != "" {
		return q, true
	}
	return "", false
}

// queryToken is the token query parameter as the operator pasted it: a
// "+" stays a "+" (form decoding would read a space, and a standard
// base64 token would never match); %XX escapes are decoded.
func queryToken(raw string) string {
	for _, kv := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k != "token" {
			continue
		}
		if u, err := url.PathUnescape(v); err == nil {
			return u
		}
		return v
	}
	return ""
}

// checkToken reports whether r presents want (constant time).
func checkToken(r *http.Request, want string) (fromQuery bool, err error) {
	got, q := tokenOf(r)
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return false, errNoToken
	}
	return q, nil
}

// hostAllowed refuses a Host header that is not the listener's own name
// or a loopback name: a page from elsewhere that rebinds its DNS name to
// 127.0.0.1 cannot read the API.
func hostAllowed(host, listen string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if loopback.Host(h) {
		return true
	}
	lh, _, _ := net.SplitHostPort(listen)
	return lh != "" && strings.EqualFold(h, strings.Trim(lh, "[]"))
}

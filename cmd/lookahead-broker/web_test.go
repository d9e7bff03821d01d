package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookahead/internal/cli"
	"lookahead/internal/logtest"
	"lookahead/internal/natstest"
)

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startRun runs the daemon with args against a real embedded NATS; it
// returns the result channel and the stop function.
func startRun(t *testing.T, args ...string) (chan error, context.CancelFunc) {
	t.Helper()
	srv := natstest.Server(t)
	cmd := subcommand("run")
	if err := cmd.Flags().Parse(append([]string{"--config", "../../packaging/config/broker.yaml", "--nats-url", srv.ClientURL(),
		"--metrics-listen", "off"}, args...)); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runRun(ctx, cfg) }()
	return done, cancel
}

// TestRunServesTheWebView: with --web-listen the broker serves the page
// (read-only) and logs where.
func TestRunServesTheWebView(t *testing.T) {
	logs := &logtest.Buffer{}
	logOutput = logs
	defer func() { logOutput = os.Stderr }()
	addr := freePort(t)
	done, cancel := startRun(t, "--web-listen", addr)
	body, code := "", 0
	// 200 comes as soon as the page listens; the broker may still be
	// taking the lease (the page says standby then), so wait for active.
	active := func() bool { return code == 200 && strings.Contains(body, `"active":true`) }
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !active(); time.Sleep(50 * time.Millisecond) {
		if r, err := http.Get("http://" + addr + "/api/overview"); err == nil {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			body, code = string(b), r.StatusCode
		}
	}
	if !active() {
		t.Errorf("overview: %d %s", code, body)
	}
	if r, err := http.Post("http://"+addr+"/api/overview", "application/json", nil); err != nil || r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %v %v", r, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(logs.String(), `"web":"http://`+addr+`/"`) {
		t.Errorf("no web address in the logs:\n%s", logs)
	}
}

// TestRunRefusesAnOpenTokenFile: a token file others may read stops the
// start, naming the key.
func TestRunRefusesAnOpenTokenFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "web.token")
	os.WriteFile(file, []byte("0123456789abcdef0123\n"), 0o644)
	os.Chmod(file, 0o644)
	t.Setenv("LOOKAHEAD_WEB_TOKEN_FILE", file)
	done, cancel := startRun(t, "--web-listen", "0.0.0.0:0")
	defer cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "web.token_file") || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the broker started with a token file others may read")
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "web.crt"), filepath.Join(dir, "web.key")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

// TestRunServesTheWebViewOverTLSWithAToken: on a non-loopback address
// with a token and TLS files, the view answers HTTPS only to the token; a
// plain HTTP request's failed handshake is logged as a JSON line of the
// broker's log (Go's HTTP server would write it as plain text).
func TestRunServesTheWebViewOverTLSWithAToken(t *testing.T) {
	logs := &logtest.Buffer{}
	logOutput = logs
	defer func() { logOutput = os.Stderr }()
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	token := filepath.Join(dir, "web.token")
	os.WriteFile(token, []byte("0123456789abcdef0123\n"), 0o600)
	t.Setenv("LOOKAHEAD_WEB_TOKEN_FILE", token)
	t.Setenv("LOOKAHEAD_WEB_TLS_CERT_FILE", cert)
	t.Setenv("LOOKAHEAD_WEB_TLS_KEY_FILE", key)
	_, port, _ := net.SplitHostPort(freePort(t))
	done, cancel := startRun(t, "--web-listen", "0.0.0.0:"+port)
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(tok string) int {
		req, _ := http.NewRequest("GET", "https://127.0.0.1:"+port+"/api/overview", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		r, err := cl.Do(req)
		if err != nil {
			return 0
		}
		r.Body.Close()
		return r.StatusCode
	}
	code := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && code == 0; time.Sleep(50 * time.Millisecond) {
		code = get("0123456789abcdef0123")
	}
	if code != 200 {
		t.Errorf("with the token: %d", code)
	}
	if code := get(""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
	if r, err := http.Get("http://127.0.0.1:" + port + "/api/overview"); err == nil && r.StatusCode == 200 {
		t.Error("plain HTTP answered")
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !strings.Contains(logs.String(), "TLS handshake error"); {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(logs.String(), `"component":"web"`) || !strings.Contains(logs.String(), "TLS handshake error") {
		t.Errorf("the failed handshake is not in the broker's log:\n%s", logs)
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("a log line that is not JSON: %s", line)
		}
	}
}

// TestRunJudgesWebFilesBeforeNATS: a bad web file (missing, open to
// others, too short a token, a certificate that is not PEM) stops run
// with exit 2 naming the key even when NATS cannot be reached, and
// config and check say the same.
func TestRunJudgesWebFilesBeforeNATS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	file := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), mode)
		os.Chmod(p, mode)
		return p
	}
	good := file("good.token", "0123456789abcdef0123\n", 0o600)
	garbage := file("garbage.crt", "not a certificate\n", 0o600)
	for _, tc := range []struct {
		name             string
		token, cert, key string
		says             string
	}{
		{"missing token file", filepath.Join(dir, "none.token"), "", "", "no such file"},
		{"token file 0644", file("open.token", "0123456789abcdef0123\n", 0o644), "", "", "chmod 600"},
		{"token too short", file("short.token", "abc\n", 0o600), "", "", "at least 16 characters"},
		{"certificate not PEM", good, garbage, key, "web.tls_cert_file"},
		{"key not PEM", good, cert, garbage, "web.tls_key_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LOOKAHEAD_WEB_TOKEN_FILE", tc.token)
			t.Setenv("LOOKAHEAD_WEB_TLS_CERT_FILE", tc.cert)
			t.Setenv("LOOKAHEAD_WEB_TLS_KEY_FILE", tc.key)
			for _, c := range []string{"run", "config", "check"} {
				cmd := subcommand(c)
				if err := cmd.Flags().Parse([]string{"--config", "../../packaging/config/broker.yaml", "--nats-url", "nats://127.0.0.1:1",
					"--metrics-listen", "off", "--web-listen", "0.0.0.0:0"}); err != nil {
					t.Fatal(err)
				}
				var err error
				if c == "run" {
					var cfg Config
					if cfg, err = loadConfig(cmd.Flags()); err == nil {
						err = runRun(context.Background(), cfg)
					}
				} else {
					cmd.SetOut(io.Discard)
					cmd.SetContext(context.Background())
					err = cmd.RunE(cmd, nil)
				}
				code := cli.ExitCode(err)
				if c == "check" { // a failed check besides NATS: exit 1, not 3 (only services unreachable)
					if code != cli.ExitFailure {
						t.Errorf("%s: exit %d (%v), want 1: the web check fails besides NATS", c, code, err)
					}
					continue
				}
				if code != cli.ExitUsage || !strings.Contains(err.Error(), tc.says) {
					t.Errorf("%s: exit %d, %v; want 2 saying %q", c, code, err, tc.says)
				}
			}
		})
	}
}

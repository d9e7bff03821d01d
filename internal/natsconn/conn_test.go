package natsconn_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/internal/gridnet"
	"lookahead/internal/natsconn"
	"lookahead/internal/natsembed"
	"lookahead/internal/natstest"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  natsconn.Config
		want string
	}{
		{"nothing", natsconn.Config{}, ""},
		{"token", natsconn.Config{Token: "t"}, ""},
		{"two ways", natsconn.Config{Token: "t", User: "u"}, "choose one"},
		{"creds and seed", natsconn.Config{Creds: "a", NKeySeed: "b"}, "choose one"},
		{"cert without key", natsconn.Config{TLSCert: "c"}, "nats.tls_key: missing: a client certificate and its key go together"},
		{"key without cert", natsconn.Config{TLSKey: "k"}, "nats.tls_cert: missing: a client certificate and its key go together"},
	} {
		err := tc.cfg.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := (natsconn.Config{NKeySeed: filepath.Join(t.TempDir(), "missing.nk")}).Options(); err == nil {
		t.Error("a missing nkey seed file is not reported")
	}
}

// startWithConfig starts an embedded server from a config file body.
func startWithConfig(t *testing.T, conf string) *natsembed.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return natstest.ServerWith(t, natsembed.Options{ConfigFile: path})
}

func connect(t *testing.T, cfg natsconn.Config) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, cfg)
	if err == nil {
		nc.Close()
	}
	return err
}

func TestTokenAndPassword(t *testing.T) {
	s := startWithConfig(t, `authorization { users: [ {user: alice, password: "right"} ] }`)
	if err := connect(t, natsconn.Config{URL: s.ClientURL(), User: "alice", Password: "right"}); err != nil {
		t.Fatalf("right password: %v", err)
	}
	if err := connect(t, natsconn.Config{URL: s.ClientURL(), User: "alice", Password: "wrong"}); err == nil {
		t.Fatal("wrong password accepted")
	}
	s = startWithConfig(t, `authorization { token: "s3cret" }`)
	if err := connect(t, natsconn.Config{URL: s.ClientURL(), Token: "s3cret"}); err != nil {
		t.Fatalf("right token: %v", err)
	}
	if err := connect(t, natsconn.Config{URL: s.ClientURL(), Token: "guess"}); err == nil {
		t.Fatal("wrong token accepted")
	}
}

func TestInboxPrefix(t *testing.T) {
	s := startWithConfig(t, `authorization { users: [
		{user: alpha, password: p, permissions: {publish: ["echo"], subscribe: ["_INBOX_alpha.>"]}}
		{user: svc, password: p, permissions: {subscribe: ["echo"], allow_responses: true}}
	] }`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	svc, err := natsconn.Connect(ctx, natsconn.Config{URL: s.ClientURL(), User: "svc", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	sub, err := svc.Subscribe("echo", func(m *nats.Msg) { m.Respond(m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	svc.Flush()
	alpha, err := natsconn.Connect(ctx, natsconn.Config{URL: s.ClientURL(), User: "alpha", Password: "p", InboxPrefix: "_INBOX_alpha"})
	if err != nil {
		t.Fatal(err)
	}
	defer alpha.Close()
	if inbox := alpha.NewRespInbox(); !strings.HasPrefix(inbox, "_INBOX_alpha.") {
		t.Fatalf("inbox %q", inbox)
	}
	m, err := alpha.Request("echo", []byte("hi"), 5*time.Second)
	if err != nil || string(m.Data) != "hi" {
		t.Fatalf("request through the prefixed inbox: %v", err)
	}
}

func newPKI(t *testing.T, name string) gridnet.PKI {
	t.Helper()
	p, err := gridnet.NewPKI(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTLSPinsTheCA(t *testing.T) {
	grid := newPKI(t, "grid")
	other := newPKI(t, "other")
	s := startWithConfig(t, fmt.Sprintf(`tls { cert_file: %q, key_file: %q, ca_file: %q, verify: true }`,
		grid.ServerCert, grid.ServerKey, grid.CA))
	url := strings.Replace(s.ClientURL(), "nats://", "tls://", 1)

	good := natsconn.Config{URL: url, TLSCA: grid.CA, TLSCert: grid.ClientCert, TLSKey: grid.ClientKey}
	if err := connect(t, good); err != nil {
		t.Fatalf("pinned CA and a client certificate from it: %v", err)
	}
	wrongCA := good
	wrongCA.TLSCA = other.CA
	if err := connect(t, wrongCA); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("server certificate accepted under another CA: %v", err)
	}
	noPin := good
	noPin.TLSCA = ""
	if err := connect(t, noPin); err == nil {
		t.Fatal("server certificate accepted without the grid CA")
	}
	strangerCert := good
	strangerCert.TLSCert, strangerCert.TLSKey = other.ClientCert, other.ClientKey
	if err := connect(t, strangerCert); err == nil {
		t.Fatal("server accepted a client certificate from another CA")
	}
	noCert := good
	noCert.TLSCert, noCert.TLSKey = "", ""
	if err := connect(t, noCert); err == nil {
		t.Fatal("server with verify: true accepted a client without a certificate")
	}
}

func TestCheckDomain(t *testing.T) {
	for d, ok := range map[string]bool{"": true, "grid": true, "hub-1": true, "a.b": false, "g*": false, "g>": false, "a b": false, "a\tb": false} {
		if err := natsconn.CheckDomain(d); (err == nil) != ok {
			t.Errorf("domain %q: %v", d, err)
		}
		if err := (natsconn.Config{JSDomain: d}).Validate(); (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "nats.js_domain")) {
			t.Errorf("config with domain %q: %v", d, err)
		}
	}
}

// TestFilesThatCannotBeReadAreBadInputNamingTheKey: a credentials, seed
// or certificate file that is missing or a directory is the user's to
// fix (IsConfigError, Key names it), found before any server is tried.
func TestFilesThatCannotBeReadAreBadInputNamingTheKey(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		key string
		cfg natsconn.Config
	}{
		{"nats.creds", natsconn.Config{Creds: missing}},
		{"nats.nkey_seed", natsconn.Config{NKeySeed: dir}},
		{"nats.tls_ca", natsconn.Config{TLSCA: missing}},
		{"nats.tls_cert", natsconn.Config{TLSCert: dir, TLSKey: dir}},
	} {
		tc.cfg.URL = "nats://127.0.0.1:1"
		_, err := tc.cfg.Options()
		if key, _ := natsconn.Key(err); !natsconn.IsConfigError(err) || key != tc.key {
			t.Errorf("%s: %v (key %q), want a config error naming %s", tc.key, err, key, tc.key)
		}
	}
	if _, err := (natsconn.Config{URL: "nats://127.0.0.1:1", Creds: missing}).Options(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing creds: %v, want fs.ErrNotExist in the chain", err)
	}
}

package client_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"lookahead/broker/client"
	"lookahead/internal/gridnet"
	"lookahead/internal/natsembed"
	"lookahead/internal/natstest"
)

// TestDialWithAClientCertificate: against a server that verifies clients'
// certificates (grid.conf's production tls block, verify: true), the CLI
// connects with --nats-tls-cert and --nats-tls-key (or their variables),
// and without them it cannot.
func TestDialWithAClientCertificate(t *testing.T) {
	pki, err := gridnet.NewPKI(t.TempDir(), "grid")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "server.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`tls { cert_file: %q, key_file: %q, ca_file: %q, verify: true }`,
		pki.ServerCert, pki.ServerKey, pki.CA)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := natstest.ServerWith(t, natsembed.Options{ConfigFile: conf})
	url := strings.Replace(s.ClientURL(), "nats://", "tls://", 1)
	dial := func(args ...string) error {
		var c client.Conn
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		c.Bind(fs)
		if err := fs.Parse(append([]string{"--nats-url", url, "--nats-tls-ca", pki.CA, "--timeout", "10s"}, args...)); err != nil {
			return err
		}
		cl, err := c.Dial(context.Background())
		if err == nil {
			cl.Close()
		}
		return err
	}
	if err := dial("--nats-tls-cert", pki.ClientCert, "--nats-tls-key", pki.ClientKey); err != nil {
		t.Fatalf("with the client certificate: %v", err)
	}
	if err := dial(); err == nil {
		t.Fatal("a server verifying clients accepted one without a certificate")
	}
	t.Setenv("LOOKAHEAD_NATS_TLS_CERT", pki.ClientCert)
	t.Setenv("LOOKAHEAD_NATS_TLS_KEY", pki.ClientKey)
	if err := dial(); err != nil {
		t.Fatalf("with the client certificate from the environment: %v", err)
	}
}

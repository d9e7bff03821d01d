package main

import (
	"bytes"
	"context"
	"github.com/nats-io/nats.go/jetstream"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/broker/daemon"
	"lookahead/internal/natsconn"
	"lookahead/internal/natsembed"
	"lookahead/internal/natstest"
)

// check against a real embedded NATS without authentication: before the
// first start the streams and the bucket are missing, which passes (the
// broker creates them itself in that setup, docs/broker.md); after init
// everything is present; a busy metrics address fails.
func TestCheckBeforeAndAfterInit(t *testing.T) {
	srv := natstest.Server(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	run := func(args ...string) (string, error) {
		cmd := newRootCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"check", "--config", "../../packaging/config/broker.yaml", "--nats-url", srv.ClientURL()}, args...))
		err := cmd.ExecuteContext(context.Background())
		return out.String(), err
	}
	out, err := run("--metrics-listen", "off")
	if err != nil || strings.Contains(out, "FAIL") || !strings.Contains(out, "the broker creates it at its first start") || !strings.Contains(out, "identities is empty") {
		t.Fatalf("before the first start, without authentication: %v\n%s", err, out)
	}
	nc, err := natsconn.Connect(context.Background(), natsconn.Config{URL: srv.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := daemon.Init(context.Background(), js, 1, 0); err != nil {
		t.Fatal(err)
	}
	if out, err := run("--metrics-listen", "off"); err != nil || strings.Contains(out, "FAIL") {
		t.Fatalf("after init: %v\n%s", err, out)
	}
	if out, err := run("--metrics-listen", busy.Addr().String()); err == nil || !strings.Contains(out, "FAIL  metrics") {
		t.Fatalf("busy metrics address: %v\n%s", err, out)
	}
	if out, err := run("--metrics-listen", "off", "--web-listen", busy.Addr().String()); err == nil || !strings.Contains(out, "FAIL  web") {
		t.Fatalf("busy web address: %v\n%s", err, out)
	}
	token := filepath.Join(t.TempDir(), "web.token")
	os.WriteFile(token, []byte("0123456789abcdef0123\n"), 0o600)
	os.Chmod(token, 0o644)
	t.Setenv("LOOKAHEAD_WEB_TOKEN_FILE", token)
	if out, err := run("--metrics-listen", "off", "--web-listen", "0.0.0.0:0"); err == nil || !strings.Contains(out, "FAIL  web") || !strings.Contains(out, "chmod 600") {
		t.Fatalf("open token file: %v\n%s", err, out)
	}
	os.Chmod(token, 0o600)
	if out, err := run("--metrics-listen", "off", "--web-listen", "0.0.0.0:0"); err != nil || !strings.Contains(out, "token file readable by the broker only") {
		t.Fatalf("good token file: %v\n%s", err, out)
	}
}

// With authentication the broker's NATS user may not create the streams
// (packaging/nats/grid.conf): a missing one fails with init as the fix.
func TestCheckAuthenticatedNeedsInit(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte("authorization { token: s3cret }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := natstest.ServerWith(t, natsembed.Options{ConfigFile: conf})
	t.Setenv("LOOKAHEAD_NATS_TOKEN", "s3cret")
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"check", "--config", "../../packaging/config/broker.yaml", "--nats-url", srv.ClientURL(), "--metrics-listen", "off"})
	err := cmd.ExecuteContext(context.Background())
	if s := out.String(); err == nil || !strings.Contains(s, "FAIL  LOOKAHEAD_AUDIT") || !strings.Contains(s, "lookahead-broker init") {
		t.Fatalf("authenticated, before init: %v\n%s", err, s)
	}
}

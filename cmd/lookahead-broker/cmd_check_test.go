package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookahead/broker/daemon"
	"lookahead/internal/natsconn"
	"lookahead/internal/natsembed"
)

// check against a real embedded NATS: before init the streams and the
// bucket are missing (with the fix), after init everything passes; a busy
// metrics address fails.
func TestCheckBeforeAndAfterInit(t *testing.T) {
	srv, err := natsembed.Start(natsembed.Options{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
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
	if err == nil || !strings.Contains(out, "FAIL  LOOKAHEAD_AUDIT") || !strings.Contains(out, "lookahead-broker init") || !strings.Contains(out, "warnings: identities is empty") {
		t.Fatalf("before init: %v\n%s", err, out)
	}
	nc, err := natsconn.Connect(context.Background(), natsconn.Config{URL: srv.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := daemon.Init(context.Background(), nc, 1, 0); err != nil {
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

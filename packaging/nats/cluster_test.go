package natsref

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker/daemon"
	"lookahead/internal/natsembed"
	"lookahead/wire"
)

// TestClusterConfFormsAGridCluster: three servers started from the
// shipped cluster.conf (its addresses moved to loopback ports, its
// names from LOOKAHEAD_NATS_SERVER) form one JetStream cluster with
// grid.conf's accounts, where the admin's init creates the streams and
// buckets at three replicas and the broker identity takes the lease.
func TestClusterConfFormsAGridCluster(t *testing.T) {
	conf, err := os.ReadFile("cluster.conf")
	if err != nil {
		t.Fatal(err)
	}
	grid, err := os.ReadFile("grid.conf")
	if err != nil {
		t.Fatal(err)
	}
	var client, route [3]int
	for i := range 3 {
		client[i], route[i] = freePort(t), freePort(t)
	}
	var servers []*natsembed.Server
	for i := range 3 {
		dir := t.TempDir()
		text := strings.NewReplacer("0.0.0.0:4222", fmt.Sprintf("127.0.0.1:%d", client[i]),
			"0.0.0.0:6222", fmt.Sprintf("127.0.0.1:%d", route[i]),
			"nats1:6222", fmt.Sprintf("127.0.0.1:%d", route[0]), "nats2:6222", fmt.Sprintf("127.0.0.1:%d", route[1]),
			"nats3:6222", fmt.Sprintf("127.0.0.1:%d", route[2]),
			"/var/lib/nats/jetstream", filepath.Join(dir, "js")).Replace(string(conf))
		if text == string(conf) {
			t.Fatal("cluster.conf has none of the addresses this test moves")
		}
		for name, data := range map[string][]byte{"cluster.conf": []byte(text), "grid.conf": grid} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("LOOKAHEAD_NATS_SERVER", fmt.Sprintf("nats%d", i+1))
		s, err := natsembed.Start(natsembed.Options{ConfigFile: filepath.Join(dir, "cluster.conf")})
		if err != nil {
			t.Fatalf("nats%d from cluster.conf: %v", i+1, err)
		}
		t.Cleanup(s.Shutdown)
		servers = append(servers, s)
	}
	for _, s := range servers {
		if got := s.Name(); !strings.HasPrefix(got, "nats") {
			t.Errorf("server name %q, want nats1..3 from LOOKAHEAD_NATS_SERVER", got)
		}
	}
	admin := connect(t, servers[0], adminCfg)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for { // the new cluster elects its JetStream meta leader
		actx, acancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := daemon.Init(actx, admin.Conn, 3, 5*time.Minute)
		if err == nil {
			_, err = daemon.InitLease(actx, admin.Conn, 3, 10*time.Second)
		}
		acancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("init at three replicas: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	broker := connect(t, servers[2], brokerCfg)
	js, _ := jetstream.New(broker.Conn)
	for _, name := range []string{wire.AuditStream, wire.JobStream, "KV_" + wire.ForecastBucket, "KV_" + wire.LeaderBucket} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("broker binds %s: %v", name, err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if info.Config.Replicas != 3 {
			t.Errorf("%s: %d replicas, want 3", name, info.Config.Replicas)
		}
	}
	kv, err := js.KeyValue(ctx, wire.LeaderBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, wire.LeaderKey, []byte(`{"broker":"broker-a"}`)); err != nil {
		t.Fatalf("the broker identity takes the lease: %v", err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

package natsref

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/internal/gridnet"
	"lookahead/wire"
)

// TestClusterConfFormsAGridCluster: three servers started from the
// shipped cluster.conf (its addresses moved to loopback ports, its
// TLS files to a throw-away CA's, its names from LOOKAHEAD_NATS_SERVER)
// form one JetStream cluster with grid.conf's accounts, where the admin's
// init creates the streams and buckets at three replicas (startNet) and
// the broker identity takes the lease.
func TestClusterConfFormsAGridCluster(t *testing.T) {
	n := startNet(t, gridnet.Options{Sites: []string{"alpha"}})
	for i := range 3 {
		if got := n.Hub(i).Name(); !strings.HasPrefix(got, "nats") {
			t.Errorf("server name %q, want nats1..3 from LOOKAHEAD_NATS_SERVER", got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	broker := dialNet(t, n.Identity("broker"))
	js, _ := jetstream.New(broker)
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

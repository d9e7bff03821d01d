package natsembed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lookahead/internal/natsconn"
)

func TestStartServesJetStream(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, natsconn.Config{URL: s.ClientURL(), Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, "k")
	if err != nil || string(e.Value()) != "v" {
		t.Fatalf("get: %v %q", err, e)
	}
}

// TestClusterReplicatesAndRestarts: three routed servers form a JetStream
// cluster; an R3 stream written on one is read through another, keeps
// taking writes with its leader stopped, and the stopped server comes back
// with its store.
func TestClusterReplicatesAndRestarts(t *testing.T) {
	c, err := StartCluster(3, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	nc, err := nats.Connect(c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var s jetstream.Stream
	for s == nil {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		s, err = js.CreateStream(actx, jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3.>"}, Replicas: 3})
		acancel()
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("R3 stream: %v", err)
			}
			time.Sleep(200 * time.Millisecond) // the meta leader is still being elected
		}
	}
	sent := 0
	publish := func(n int) {
		for range n {
			sent++
			for {
				actx, acancel := context.WithTimeout(ctx, 2*time.Second)
				_, err := js.Publish(actx, "r3.x", []byte("x"), jetstream.WithMsgID(fmt.Sprint(sent))) // a retry is not a second message
				acancel()
				if err == nil {
					break
				} else if ctx.Err() != nil {
					t.Fatalf("publish: %v", err)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	publish(5)
	leader := c.StreamLeader("R3")
	if leader < 0 {
		t.Fatal("no server leads the R3 stream")
	}
	c.Stop(leader)
	publish(5) // a new leader is elected among the other two
	if err := c.Start(leader); err != nil {
		t.Fatal(err)
	}
	for {
		info, err := s.Info(ctx)
		if err == nil && info.State.Msgs == 10 && len(info.Cluster.Replicas) == 2 && allCurrent(info.Cluster.Replicas) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("after the restart: %+v %v", info, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func allCurrent(peers []*jetstream.PeerInfo) bool {
	for _, p := range peers {
		if !p.Current {
			return false
		}
	}
	return true
}

// TestStartOnATakenPortSaysSo: a server that cannot listen (its port held
// by another listener) fails with the listen error, naming the port, not
// after a wait with "not ready".
func TestStartOnATakenPortSaysSo(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	s, err := Start(Options{Port: port, StoreDir: t.TempDir()})
	if err == nil {
		s.Shutdown()
		t.Fatalf("started on taken port %d", port)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", port)) || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("error %q: want the listen error on 127.0.0.1:%d (address in use)", err, port)
	}
}

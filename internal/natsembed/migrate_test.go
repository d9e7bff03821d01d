package natsembed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestOneReplicaStreamMovesToThree is the last step docs/operations.md
// describes ("Moving a grid to three replicas"): a one-replica stream on
// a three-server cluster goes to three replicas by a stream update and
// keeps its messages.
func TestOneReplicaStreamMovesToThree(t *testing.T) {
	c, err := StartCluster(3, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	if err := c.WaitJetStream(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(c.URLs())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	retry := func(what string, f func(context.Context) error) {
		for {
			actx, acancel := context.WithTimeout(ctx, 2*time.Second)
			err := f(actx)
			acancel()
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	cfg := jetstream.StreamConfig{Name: "ONE", Subjects: []string{"one.>"}, Storage: jetstream.FileStorage, Replicas: 1}
	retry("create", func(ctx context.Context) error { _, err := js.CreateStream(ctx, cfg); return err })
	for i := range 5 {
		retry("publish", func(ctx context.Context) error {
			_, err := js.Publish(ctx, "one.x", []byte("x"), jetstream.WithMsgID(fmt.Sprint(i)))
			return err
		})
	}
	cfg.Replicas = 3
	retry("update", func(ctx context.Context) error { _, err := js.UpdateStream(ctx, cfg); return err })
	retry("replicated", func(ctx context.Context) error {
		s, err := js.Stream(ctx, "ONE")
		if err != nil {
			return err
		}
		info, err := s.Info(ctx)
		if err != nil {
			return err
		}
		if info.State.Msgs != 5 || info.Config.Replicas != 3 || len(info.Cluster.Replicas) != 2 || !allCurrent(info.Cluster.Replicas) {
			return fmt.Errorf("not yet: %d messages, %d replicas", info.State.Msgs, len(info.Cluster.Replicas))
		}
		return nil
	})
}

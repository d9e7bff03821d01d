package daemon

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/wire"
)

// movingStream is the broker's JetStream with another writer: right
// before the broker's first term record, an earlier broker still at work
// appends one of its own, after the new broker's replay read the stream.
type movingStream struct {
	jetstream.JetStream
	once  sync.Once
	moved uint64 // the other writer's sequence
}

func (m *movingStream) Publish(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if subject == wire.JobEpochSubject {
		m.once.Do(func() {
			if ack, err := m.JetStream.Publish(ctx, "lookahead.jobs.g9", []byte(`{"kind":"cancelled","job":"g9"}`)); err == nil {
				m.moved = ack.Sequence
			}
		})
	}
	return m.JetStream.Publish(ctx, subject, data, opts...)
}

// TestEstablishReplaysAgainWhenTheStreamMoved: the job stream moves
// between a new broker's replay and its term record (the conditional
// append is refused); the broker replays again and begins its term after
// what the other wrote, instead of giving up. (Issue 34: a mutation that
// dropped the replay survived every test.)
func TestEstablishReplaysAgainWhenTheStreamMoved(t *testing.T) {
	e := newEnv(t)
	var cfg Config
	r := e.startBroker(func(c *Config) { cfg = *c })
	r.stop()
	b, err := New(connect(t, e.srv), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ms := &movingStream{JetStream: b.js}
	b.js = ms
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	select {
	case <-b.Ready():
	case err := <-done:
		t.Fatalf("the broker gave up when the stream moved: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("broker not ready")
	}
	if ms.moved == 0 || b.Epoch() <= ms.moved {
		t.Fatalf("epoch %d, the other writer's append at %d: want the term begun after it", b.Epoch(), ms.moved)
	}
	cancel()
	<-done
}

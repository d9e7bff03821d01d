package daemon

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rs/zerolog"

	"lookahead/broker/client"
)

// BenchmarkSubmitRoundTrip measures one submission through NATS: the
// client's request, the broker's admission, the durable append to the job
// stream (file storage, acked), and the reply.
func BenchmarkSubmitRoundTrip(b *testing.B) {
	e := newEnv(b)
	r := e.startBroker(func(c *Config) { c.Log = c.Log.Level(zerolog.ErrorLevel) })
	cl := client.New(connect(b, e.srv), "")
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := cl.Submit(ctx, job(8, 3600, 1), fmt.Sprintf("bench-%d", i))
		if err != nil || rep.Code != "ok" {
			b.Fatalf("submit: %v %+v", err, rep)
		}
	}
	b.StopTimer()
	r.stop()
}

// BenchmarkNATSRequestBaseline is a bare request/reply on the same
// embedded server (a responder that echoes): the floor under a submission.
func BenchmarkNATSRequestBaseline(b *testing.B) {
	e := newEnv(b)
	nc := connect(b, e.srv)
	sub, err := nc.Subscribe("bench.echo", func(m *nats.Msg) { m.Respond(m.Data) })
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Unsubscribe()
	cl := connect(b, e.srv)
	data := []byte(`{"type":"submit.v1","request_id":"x","job":{"procs":8,"walltime":3600}}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := cl.Request("bench.echo", data, 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

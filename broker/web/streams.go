package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker"
	"lookahead/broker/client"
	"lookahead/wire"
)

// Streams reads the broker's JetStream streams for the page: a job's
// events from the job stream and the latest audit records.
type Streams struct {
	JS jetstream.JetStream
}

// streamMsg is one message read: its subject and body.
type streamMsg struct {
	subject string
	data    []byte
}

// read returns up to limit messages of stream from cfg's start, oldest
// first; a missing stream is no messages.
func (s Streams) read(ctx context.Context, stream string, cfg jetstream.OrderedConsumerConfig, limit int) ([]streamMsg, error) {
	st, err := s.JS.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", stream, err)
	}
	cons, err := st.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", stream, err)
	}
	var out []streamMsg
	for len(out) < limit {
		batch, err := cons.Fetch(min(500, limit-len(out)), jetstream.FetchMaxWait(300*time.Millisecond))
		if err != nil {
			return out, fmt.Errorf("read %s: %w", stream, err)
		}
		n, done := 0, false
		for m := range batch.Messages() {
			n++
			out = append(out, streamMsg{m.Subject(), m.Data()})
			if meta, err := m.Metadata(); err == nil && meta.NumPending == 0 {
				done = true
			}
		}
		if done || n == 0 {
			break
		}
	}
	return out, nil
}

// MaxJobEvents bounds the history shown of one job.
const MaxJobEvents = 1000

// JobEvents is job's history as the job stream holds it, oldest first
// (events before the broker's latest snapshot may have been purged).
// A job's script is not shown. It reads the job's subject message by
// message through the stream's subject index (a get of the next message
// on the subject, direct when the stream allows it): no consumer is
// made, so a page polling a job's history leaves nothing behind on the
// server.
func (s Streams) JobEvents(ctx context.Context, job string) ([]broker.Event, error) {
	out := []broker.Event{}
	st, err := s.JS.Stream(ctx, wire.JobStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("stream %s: %w", wire.JobStream, err)
	}
	subject := fmt.Sprintf(wire.JobSubjectT, job)
	for seq := uint64(1); len(out) < MaxJobEvents; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("read %s: %w", subject, err)
		}
		var e broker.Event
		if json.Unmarshal(m.Data, &e) == nil && e.Job == job {
			e.Script = nil
			out = append(out, e)
		}
		seq = m.Sequence + 1
	}
	return out, nil
}

// AuditTail is the last n records of the audit stream, oldest first,
// each with the origin its subject names.
func (s Streams) AuditTail(ctx context.Context, n int) ([]wire.AuditRecord, error) {
	st, err := s.JS.Stream(ctx, wire.AuditStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", wire.AuditStream, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", wire.AuditStream, err)
	}
	if info.State.Msgs == 0 {
		return nil, nil
	}
	from := info.State.FirstSeq
	if last := info.State.LastSeq; last >= uint64(n) && last-uint64(n)+1 > from {
		from = last - uint64(n) + 1
	}
	msgs, err := s.read(ctx, wire.AuditStream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from}, n)
	out := make([]wire.AuditRecord, 0, len(msgs))
	for _, m := range msgs {
		var r wire.AuditRecord
		if json.Unmarshal(m.data, &r) == nil {
			client.TrustSubject(m.subject, &r)
			out = append(out, r)
		}
	}
	return out, err
}

package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker"
	"lookahead/wire"
)

// Streams reads the broker's JetStream streams for the page: a job's
// events from the job stream and the latest audit records.
type Streams struct {
	JS jetstream.JetStream
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

package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker/client"
	"lookahead/wire"
)

// auditCatchUp bounds how long a read waits for the follower to reach
// the record the stream last appended; a follower that does not is
// replaced at the next read.
const auditCatchUp = 3 * time.Second

// AuditTail is the tail of the audit stream the Audit tab shows, kept in
// memory and shared by every page (Streams.FollowAudit). One ordered consumer follows the
// stream from its last n records on for as long as the server runs, so
// however many tabs poll it the broker holds one consumer (a read used
// to make one each). A read asks the stream for its last sequence (no
// consumer) and waits until the follower has it: a record appended
// before the read is in its answer.
type AuditTail struct {
	js   jetstream.JetStream
	n    int
	life context.Context

	mu    sync.Mutex
	cc    jetstream.ConsumeContext // nil: not following
	gen   int                      // the follower's; a stopped one's late messages are dropped
	recs  []seqRecord              // oldest first; the last n are the tail
	last  uint64                   // the last stream sequence the follower delivered
	moved chan struct{}            // closed (and replaced) when last moves or the follower stops
}

type seqRecord struct {
	seq uint64
	rec wire.AuditRecord
}

// FollowAudit is the tail of the last n records of the audit stream,
// followed from its first read on until life ends.
func (s Streams) FollowAudit(life context.Context, n int) *AuditTail {
	t := &AuditTail{js: s.JS, n: n, life: life, moved: make(chan struct{})}
	context.AfterFunc(life, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopLocked()
	})
	return t
}

// Records is the last n records of the audit stream, oldest first, each
// with the origin its subject names; a missing stream is none.
func (t *AuditTail) Records(ctx context.Context) ([]wire.AuditRecord, error) {
	if t.js == nil {
		return nil, nil
	}
	st, err := t.js.Stream(ctx, wire.AuditStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", wire.AuditStream, err)
	}
	state := st.CachedInfo().State
	if err := t.follow(ctx, st, state); err != nil {
		return nil, err
	}
	err = t.await(ctx, state.LastSeq)
	return t.tail(state.FirstSeq), err
}

// follow starts the follower unless one runs on the stream as it is
// (a stream whose last sequence went back was made anew).
func (t *AuditTail) follow(ctx context.Context, st jetstream.Stream, state jetstream.StreamState) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cc != nil && state.LastSeq >= t.last {
		select {
		case <-t.cc.Closed():
		default:
			return nil
		}
	}
	t.stopLocked()
	if t.life.Err() != nil {
		return errors.New("the web view is stopping")
	}
	from := state.FirstSeq
	if state.LastSeq >= uint64(t.n) && state.LastSeq-uint64(t.n)+1 > from {
		from = state.LastSeq - uint64(t.n) + 1
	}
	if state.Msgs == 0 {
		from = state.LastSeq + 1
	}
	from = max(from, 1)
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from})
	if err != nil {
		return fmt.Errorf("follow %s: %w", wire.AuditStream, err)
	}
	t.gen++
	cc, err := cons.Consume(t.take(t.gen))
	if err != nil {
		return fmt.Errorf("follow %s: %w", wire.AuditStream, err)
	}
	t.cc, t.recs, t.last = cc, nil, from-1
	return nil
}

// take keeps each record the follower of generation gen delivers.
func (t *AuditTail) take(gen int) jetstream.MessageHandler {
	return func(m jetstream.Msg) {
		meta, err := m.Metadata()
		if err != nil {
			return
		}
		var r wire.AuditRecord
		ok := json.Unmarshal(m.Data(), &r) == nil
		if ok {
			client.TrustSubject(m.Subject(), &r)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if gen != t.gen {
			return
		}
		if ok {
			t.recs = append(t.recs, seqRecord{meta.Sequence.Stream, r})
			if len(t.recs) >= 2*t.n {
				t.recs = append([]seqRecord(nil), t.recs[len(t.recs)-t.n:]...)
			}
		}
		t.last = meta.Sequence.Stream
		t.wakeLocked()
	}
}

// await waits until the follower has delivered seq; one that does not
// within auditCatchUp is stopped, and the next read starts another.
func (t *AuditTail) await(ctx context.Context, seq uint64) error {
	ctx, cancel := context.WithTimeout(ctx, auditCatchUp)
	defer cancel()
	for {
		t.mu.Lock()
		last, moved, following := t.last, t.moved, t.cc != nil
		t.mu.Unlock()
		switch {
		case last >= seq:
			return nil
		case !following:
			return fmt.Errorf("read %s: the web view stopped following it", wire.AuditStream)
		}
		select {
		case <-moved:
		case <-ctx.Done():
			t.mu.Lock()
			t.stopLocked()
			t.mu.Unlock()
			return fmt.Errorf("read %s: records up to %d not delivered: %w", wire.AuditStream, seq, ctx.Err())
		}
	}
}

// tail is the last n records kept that the stream still holds (from
// first on).
func (t *AuditTail) tail(first uint64) []wire.AuditRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	recs := t.recs[max(0, len(t.recs)-t.n):]
	out := make([]wire.AuditRecord, 0, len(recs))
	for _, r := range recs {
		if r.seq >= first {
			out = append(out, r.rec)
		}
	}
	return out
}

func (t *AuditTail) stopLocked() {
	if t.cc != nil {
		t.cc.Stop()
		t.cc = nil
		t.wakeLocked()
	}
}

func (t *AuditTail) wakeLocked() {
	close(t.moved)
	t.moved = make(chan struct{})
}

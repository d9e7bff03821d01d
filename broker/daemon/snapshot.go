package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker"
	"lookahead/wire"
)

// The job stream is the queue's event log. Every SnapshotInterval the
// broker forgets ended jobs older than Retain, writes the whole remaining
// state as a snapshot (subject wire.JobSnapshotSubject, in parts that each
// fit in a NATS message), and purges the events before it: a replay starts
// at the latest complete snapshot, so neither the broker's memory nor the
// stream grows with the grid's history.

// snapshotType names a snapshot part.
const snapshotType = "snapshot.v1"

// snapshotPart is one message of a snapshot. Part 0 carries the state's
// counters; every part carries some of the jobs. Start is the stream
// sequence of part 0, on the parts after it.
type snapshotPart struct {
	Type  string             `json:"type"`
	ID    string             `json:"id"`
	Index int                `json:"index"`
	Count int                `json:"count"`
	Start uint64             `json:"start,omitempty"`
	Time  int64              `json:"time"`
	Seq   uint64             `json:"seq,omitempty"`
	Spent map[string]float64 `json:"spent,omitempty"`
	Jobs  []json.RawMessage  `json:"jobs"`
}

// snapshotter is the broker's handle on the job stream for snapshots.
type snapshotter struct {
	stream      jetstream.Stream
	purgeDenied bool // the stream was created with deny_purge
	last        time.Time
}

// Snapshot forgets ended jobs past the retention period, writes a
// snapshot of the queue and purges the events before it. Nothing is
// written when nothing changed since the last one.
func (b *Broker) Snapshot(ctx context.Context) error {
	b.lockToWrite() // the snapshot follows every event before it
	forgot := b.state.Forget(b.now() - int64(b.cfg.Retain/time.Second))
	if forgot == 0 && b.events == 0 {
		b.mu.Unlock()
		return nil
	}
	parts, err := snapshotParts(b.state.Snapshot(), b.now(), int(b.nc.MaxPayload()/2))
	// The parts are appended holding the append slot, not b.mu: no event
	// comes between them, and requests are served meanwhile.
	b.inflight = true
	b.mu.Unlock()
	var start uint64
	if err == nil {
		start, err = b.publishSnapshot(ctx, parts)
	}
	b.mu.Lock()
	b.inflight = false
	b.settled.Broadcast()
	if err == nil {
		b.events = 0
	}
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("snapshot of the queue: %w", err)
	}
	b.snap.last = time.Now()
	b.log.Info().Int("forgotten", forgot).Int("parts", len(parts)).Uint64("stream_seq", start).Msg("queue snapshot written")
	if err := b.keepTermRecord(ctx); err != nil {
		return err // nothing purged: the term's record stays readable
	}
	return b.purgeBefore(ctx, start)
}

// snapshotParts encodes a snapshot into parts of at most maxBytes of jobs.
func snapshotParts(sn broker.Snapshot, now int64, maxBytes int) ([]snapshotPart, error) {
	var idb [8]byte
	rand.Read(idb[:])
	id := hex.EncodeToString(idb[:])
	parts := []snapshotPart{{Type: snapshotType, ID: id, Time: now, Seq: sn.Seq, Spent: sn.Spent, Jobs: []json.RawMessage{}}}
	size := 0
	for _, j := range sn.Jobs {
		data, err := json.Marshal(j)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", j.Req.ID, err)
		}
		if size > 0 && size+len(data) > maxBytes {
			parts = append(parts, snapshotPart{Type: snapshotType, ID: id, Index: len(parts), Time: now, Jobs: []json.RawMessage{}})
			size = 0
		}
		last := &parts[len(parts)-1]
		last.Jobs, size = append(last.Jobs, data), size+len(data)+1
	}
	for i := range parts {
		parts[i].Count = len(parts)
	}
	return parts, nil
}

// publishSnapshot appends the parts in order; it returns the stream
// sequence of the first. Callers hold the append slot (b.inflight), so no
// event comes between.
func (b *Broker) publishSnapshot(ctx context.Context, parts []snapshotPart) (uint64, error) {
	var start uint64
	for i := range parts {
		parts[i].Start = start
		data, err := json.Marshal(parts[i])
		if err != nil {
			return 0, err
		}
		ack, err := b.appendJob(ctx, wire.JobSnapshotSubject, data)
		if err != nil {
			return 0, fmt.Errorf("append part %d of %d: %w", i+1, len(parts), err)
		}
		if i == 0 {
			start = ack.Sequence
		}
	}
	return start, nil
}

// purgeBefore removes the events a snapshot at sequence start replaced.
// A stream created with deny_purge (by a broker before snapshots) keeps
// them; replays still start at the snapshot.
func (b *Broker) purgeBefore(ctx context.Context, start uint64) error {
	if b.snap.stream == nil || b.snap.purgeDenied || start <= 1 {
		return nil
	}
	if err := b.acting(); err != nil {
		return nil // a broker no longer active purges nothing
	}
	err := b.snap.stream.Purge(ctx, jetstream.WithPurgeSequence(start))
	if err != nil {
		b.log.Warn().Err(err).Msg("events before the snapshot not purged; replays start at the snapshot anyway")
	}
	return nil
}

// restoring collects snapshot parts during a replay.
type restoring struct {
	parts []snapshotPart
}

// add takes one part; it returns the snapshot when the part completes one.
func (r *restoring) add(data []byte) (*broker.Snapshot, error) {
	var p snapshotPart
	if err := json.Unmarshal(data, &p); err != nil || p.Type != snapshotType || p.Count < 1 {
		return nil, errors.New("undecodable snapshot part")
	}
	if p.Index == 0 {
		r.parts = r.parts[:0]
	}
	if p.Index != len(r.parts) || (len(r.parts) > 0 && r.parts[0].ID != p.ID) {
		r.parts = r.parts[:0]
		return nil, fmt.Errorf("snapshot %s part %d out of order", p.ID, p.Index)
	}
	r.parts = append(r.parts, p)
	if len(r.parts) < p.Count {
		return nil, nil
	}
	sn := broker.Snapshot{Seq: r.parts[0].Seq, Spent: r.parts[0].Spent}
	for _, part := range r.parts {
		for _, raw := range part.Jobs {
			var j broker.SnapshotJob
			if err := json.Unmarshal(raw, &j); err != nil {
				return nil, fmt.Errorf("snapshot %s: %w", p.ID, err)
			}
			sn.Jobs = append(sn.Jobs, j)
		}
	}
	r.parts = r.parts[:0]
	return &sn, nil
}

// replayStart is the stream sequence a replay starts at: the first part of
// the latest complete snapshot, or 0 (the stream's start).
func replayStart(ctx context.Context, s jetstream.Stream) uint64 {
	m, err := s.GetLastMsgForSubject(ctx, wire.JobSnapshotSubject)
	if err != nil {
		return 0
	}
	var p snapshotPart
	if json.Unmarshal(m.Data, &p) != nil || p.Type != snapshotType || p.Index != p.Count-1 {
		return 0 // none, or the last one is incomplete: read everything
	}
	if p.Count == 1 {
		return m.Sequence
	}
	return p.Start
}

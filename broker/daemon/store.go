package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker"
	"lookahead/wire"
)

// jobStreamConfig is the durable grid queue: every event since the latest
// snapshot (older ones are purged by the broker after each snapshot; no
// message is ever deleted singly); a retried submission within the
// duplicate window is dropped by JetStream as well as by the broker's own
// request index. Direct gets are allowed: an agent reads the last term
// record with one (agent/epoch_verify.go; its permission names that
// subject only).
func jobStreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        wire.JobStream,
		Description: "lookahead grid queue events and snapshots (broker)",
		Subjects:    []string{wire.JobSubjects},
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		Duplicates:  10 * time.Minute,
		DenyDelete:  true,
		AllowDirect: true,
	}
}

// AuditStreamConfig is the append-only audit trail shared by the broker and
// the agents: deleting or purging records is denied.
func AuditStreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        wire.AuditStream,
		Description: "lookahead audit trail (append-only)",
		Subjects:    []string{wire.AuditSubjects},
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		DenyDelete:  true,
		DenyPurge:   true,
	}
}

// errNotCreated marks a stream the broker found missing and could not
// create: not retried at start (without the permission the create only
// times out).
var errNotCreated = errors.New("not created")

// ensureStream uses a stream as it is when it exists (created by the NATS
// admin with `lookahead-broker init`, or by an earlier start) and creates
// it otherwise. The broker never updates a stream's configuration, so it
// needs no STREAM.UPDATE permission; without STREAM.CREATE a missing
// stream is an error that says who must create it.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, cfg.Name)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("stream %s: %w", cfg.Name, err)
	}
	s, err = js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		s, err = js.Stream(ctx, cfg.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("stream %s is missing and could not be created (create it as the NATS admin with `lookahead-broker init`): %w: %w", cfg.Name, errNotCreated, err)
	}
	return s, nil
}

// jobPublisher appends to the job stream (Broker.appendJob: conditional
// on the last sequence the broker wrote).
type jobPublisher func(ctx context.Context, subject string, data []byte, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)

// appendEvent writes one event to the job stream with pub (the broker's
// conditional append, appendJob); a submission carries its request id as
// the message id so JetStream drops a duplicate.
func appendEvent(ctx context.Context, pub jobPublisher, e broker.Event) error {
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode %s event of %s: %w", e.Kind, e.Job, err)
	}
	var opts []jetstream.PublishOpt
	if e.Kind == broker.EvSubmitted && e.RequestID != "" {
		opts = append(opts, jetstream.WithMsgID("submit-"+e.RequestID))
	}
	if _, err := pub(ctx, fmt.Sprintf(wire.JobSubjectT, e.Job), data, opts...); err != nil {
		return fmt.Errorf("append %s event of %s to %s: %w", e.Kind, e.Job, wire.JobStream, err)
	}
	return nil
}

// replayer takes what a replay reads: events, and complete snapshots
// (which replace the state built so far).
type replayer struct {
	apply   func(broker.Event)
	restore func(broker.Snapshot) error
}

// replay reads the job stream in order from the latest complete snapshot
// (or the start) and hands every event and snapshot to r. Undecodable
// messages are counted and skipped.
func replay(ctx context.Context, s jetstream.Stream, r replayer) (events, bad int, err error) {
	info, err := s.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("stream %s info: %w", wire.JobStream, err)
	}
	last := info.State.LastSeq
	if info.State.Msgs == 0 {
		return 0, 0, nil
	}
	cfg := jetstream.OrderedConsumerConfig{}
	if start := replayStart(ctx, s); start > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start
	}
	cons, err := s.OrderedConsumer(ctx, cfg)
	if err != nil {
		return 0, 0, fmt.Errorf("replay %s: %w", wire.JobStream, err)
	}
	var snaps restoring
	for {
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return events, bad, fmt.Errorf("replay %s: %w", wire.JobStream, err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			switch msg.Subject() {
			case wire.JobEpochSubject:
				// a term's start (broker/daemon/term.go): no event
			case wire.JobSnapshotSubject:
				if sn, err := snaps.add(msg.Data()); err != nil {
					bad++
				} else if sn != nil {
					if err := r.restore(*sn); err != nil {
						return events, bad, fmt.Errorf("replay %s: %w", wire.JobStream, err)
					}
				}
			default:
				if e, ok := decodeEvent(msg.Data()); ok {
					events++
					r.apply(e)
				} else {
					bad++
				}
			}
			if meta, err := msg.Metadata(); err == nil && meta.Sequence.Stream >= last {
				return events, bad, nil
			}
		}
		if err := batch.Error(); err != nil {
			return events, bad, fmt.Errorf("replay %s: %w", wire.JobStream, err)
		}
		if n == 0 {
			return events, bad, fmt.Errorf("replay %s: stream ends before sequence %d", wire.JobStream, last)
		}
	}
}

func decodeEvent(data []byte) (broker.Event, bool) {
	var e broker.Event
	return e, json.Unmarshal(data, &e) == nil
}

// publishAudit appends one record to the audit stream.
func publishAudit(ctx context.Context, js jetstream.JetStream, r wire.AuditRecord) error {
	subject, data, err := auditMsg(r)
	if err != nil {
		return err
	}
	if _, err := js.Publish(ctx, subject, data); err != nil {
		return fmt.Errorf("append audit record %s of %s: %w", r.Action, r.Job, err)
	}
	return nil
}

// auditMsg is the subject and body of an audit record of the broker's
// (or of the origin it names).
func auditMsg(r wire.AuditRecord) (string, []byte, error) {
	r.Type = wire.TypeAudit
	if r.Origin == "" {
		r.Origin = wire.AuditOriginBroker
	}
	data, err := json.Marshal(r)
	if err != nil {
		return "", nil, fmt.Errorf("encode audit record: %w", err)
	}
	return wire.AuditSubject(r.Origin, r.Action), data, nil
}

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/wire"
)

// ensureAuditStream makes sure the audit stream exists: an existing one is
// used as it is (the broker or the operator may own its configuration); a
// missing one is created append-only (deny delete and purge).
func ensureAuditStream(ctx context.Context, js jetstream.JetStream, replicas int, created func(string)) error {
	_, err := js.Stream(ctx, wire.AuditStream)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("audit stream %s: %w", wire.AuditStream, err)
	}
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name: wire.AuditStream, Description: "lookahead audit trail (append-only)",
		Subjects: []string{wire.AuditSubjects}, Storage: jetstream.FileStorage,
		Replicas: replicas, DenyDelete: true, DenyPurge: true,
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("create audit stream %s: %w", wire.AuditStream, err)
	}
	if err == nil {
		created("the audit stream " + wire.AuditStream)
	}
	return nil
}

// audit appends rec to the audit stream and waits for the ack.
func (a *Agent) audit(ctx context.Context, rec wire.AuditRecord) error {
	return a.auditAsync(rec).wait(ctx)
}

// auditAck is an audit record on its way to the stream: wait returns
// once the stream has it (nil) or it failed. The zero auditAck waits for
// nothing.
type auditAck struct {
	what string
	f    jetstream.PubAckFuture
	err  error
}

// auditAsync sends rec to the audit stream without waiting: records sent
// one after the other are stored in that order.
func (a *Agent) auditAsync(rec wire.AuditRecord) auditAck {
	if a.pub == nil {
		return auditAck{err: errors.New("audit: the agent is not running (no NATS)")}
	}
	rec.Type = wire.TypeAudit
	rec.Origin = a.cfg.Site
	rec.Site = a.cfg.Site
	if rec.Time == 0 {
		rec.Time = a.deps.Now().Unix()
	}
	k := auditAck{what: fmt.Sprintf("audit %s of %s", rec.Action, rec.Job)}
	data, err := json.Marshal(rec)
	if err == nil {
		k.f, err = a.pub.js.PublishAsync(wire.AuditSubject(a.cfg.Site, rec.Action), data)
	}
	if err != nil {
		k.err = fmt.Errorf("%s: %w", k.what, err)
	}
	return k
}

func (k auditAck) wait(ctx context.Context) error {
	switch {
	case k.err != nil:
		return k.err
	case k.f == nil:
		return nil
	}
	select {
	case <-k.f.Ok():
		return nil
	case err := <-k.f.Err():
		return fmt.Errorf("%s: %w", k.what, err)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", k.what, ctx.Err())
	}
}

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
	if a.pub == nil {
		return errors.New("audit: the agent is not running (no NATS)")
	}
	rec.Type = wire.TypeAudit
	rec.Origin = a.cfg.Site
	rec.Site = a.cfg.Site
	if rec.Time == 0 {
		rec.Time = a.deps.Now().Unix()
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit %s of %s: %w", rec.Action, rec.Job, err)
	}
	if _, err := a.pub.js.Publish(ctx, wire.AuditSubject(a.cfg.Site, rec.Action), data); err != nil {
		return fmt.Errorf("audit %s of %s: %w", rec.Action, rec.Job, err)
	}
	return nil
}

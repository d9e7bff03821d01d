package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/wire"
)

// InitResult says what Init did with one stream or bucket.
type InitResult struct {
	Name    string `json:"name"`
	Created bool   `json:"created"`
	// Note flags an existing stream whose configuration is weaker than
	// lookahead's (e.g. an audit trail that allows purges).
	Note string `json:"note,omitempty"`
	// Missing: Inspect found no such stream or bucket.
	Missing bool `json:"missing,omitempty"`
	// Changed says what Init changed in an existing stream.
	Changed string `json:"changed,omitempty"`
	// Fix says what clears Note.
	Fix string `json:"fix,omitempty"`
}

// Init creates what the broker and the agents use — the audit stream
// LOOKAHEAD_AUDIT (append-only: deny delete and purge), the job stream
// LOOKAHEAD_JOBS and the forecast bucket — over a connection with the NATS
// admin identity, once, at install. The running broker then needs neither
// STREAM.CREATE nor STREAM.UPDATE on the audit stream, so it cannot shrink
// the trail. Existing streams are left as they are, but for one change: a
// job stream made before agents verified epochs gains allow_direct (the
// agents read its last term record with a direct get). Init is safe to
// rerun. js is the grid's JetStream (natsconn.JetStream: in its domain if
// any).
func Init(ctx context.Context, js jetstream.JetStream, replicas int, siteTTL time.Duration) ([]InitResult, error) {
	if replicas == 0 {
		replicas = 1
	}
	var out []InitResult
	for _, cfg := range []jetstream.StreamConfig{AuditStreamConfig(replicas), jobStreamConfig(replicas)} {
		r, err := initStream(ctx, js, cfg)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	kvCfg := forecastBucketConfig(siteTTL, replicas)
	_, err := js.KeyValue(ctx, kvCfg.Bucket)
	created := false
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		_, err = js.CreateKeyValue(ctx, kvCfg)
		created = err == nil
	}
	if err != nil {
		return out, fmt.Errorf("kv bucket %s: %w", kvCfg.Bucket, err)
	}
	return append(out, InitResult{Name: "KV_" + kvCfg.Bucket, Created: created}), nil
}

func initStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (InitResult, error) {
	r, err := inspectStream(ctx, js, cfg.Name)
	if err == nil && r.Note == noDirectNote {
		return allowDirect(ctx, js, cfg.Name)
	}
	if err != nil || !r.Missing {
		return r, err
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		return InitResult{Name: cfg.Name}, fmt.Errorf("create stream %s: %w", cfg.Name, err)
	}
	return InitResult{Name: cfg.Name, Created: true}, nil
}

// noDirectNote flags a job stream that does not allow direct gets.
const noDirectNote = "exists but does not allow direct gets: agents cannot verify broker epochs"

// allowDirect turns direct gets on in an existing stream.
func allowDirect(ctx context.Context, js jetstream.JetStream, name string) (InitResult, error) {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return InitResult{Name: name}, fmt.Errorf("stream %s: %w", name, err)
	}
	cfg := s.CachedInfo().Config
	cfg.AllowDirect = true
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return InitResult{Name: name}, fmt.Errorf("allow direct gets on stream %s: %w", name, err)
	}
	return InitResult{Name: name, Changed: "allowed direct gets (agents verify broker epochs with them)"}, nil
}

// inspectStream says whether stream name exists and, for the audit
// stream, whether it is append-only; for the job stream, whether it
// allows direct gets.
func inspectStream(ctx context.Context, js jetstream.JetStream, name string) (InitResult, error) {
	r := InitResult{Name: name}
	s, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		r.Missing = true
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("stream %s: %w", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return r, fmt.Errorf("stream %s: %w", name, err)
	}
	c := info.Config
	if name == wire.AuditStream && (!c.DenyDelete || !c.DenyPurge || c.MaxMsgs > 0 || c.MaxAge > 0 || c.MaxBytes > 0) {
		r.Note = "exists but is not append-only (deny_delete, deny_purge, no limits): records can be lost"
		r.Fix = "recreate it append-only: docs/security.md says how"
	}
	if name == wire.JobStream && !c.AllowDirect {
		r.Note, r.Fix = noDirectNote, "run `lookahead-broker init` once with the NATS admin's identity: it allows them"
	}
	return r, nil
}

// Inspect reports, changing nothing, whether the streams and the bucket
// Init makes exist, and whether the audit stream is append-only.
func Inspect(ctx context.Context, js jetstream.JetStream) ([]InitResult, error) {
	var out []InitResult
	for _, name := range []string{wire.AuditStream, wire.JobStream} {
		r, err := inspectStream(ctx, js, name)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	r := InitResult{Name: "KV_" + wire.ForecastBucket}
	_, err := js.KeyValue(ctx, wire.ForecastBucket)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		r.Missing = true
	case err != nil:
		return out, fmt.Errorf("kv bucket %s: %w", wire.ForecastBucket, err)
	}
	return append(out, r), nil
}

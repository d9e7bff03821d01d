package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/internal/durfmt"
	"lookahead/wire"
)

// InitLease creates the leadership lease bucket (one key that expires
// after ttl unless the active broker renews it) with replicas, as Init
// does the streams; an existing bucket is left as it is, and its TTL and
// replicas reported when they differ.
func InitLease(ctx context.Context, js jetstream.JetStream, replicas int, ttl time.Duration) (InitResult, error) {
	cfg := leaseBucketConfig(ttl, max(replicas, 1))
	r := InitResult{Name: "KV_" + cfg.Bucket}
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		if _, err := js.CreateKeyValue(ctx, cfg); err != nil {
			return r, fmt.Errorf("kv bucket %s: %w", cfg.Bucket, err)
		}
		r.Created = true
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("kv bucket %s: %w", cfg.Bucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return r, fmt.Errorf("kv bucket %s: %w", cfg.Bucket, err)
	}
	if st.TTL() != cfg.TTL {
		r.Note = fmt.Sprintf("exists with a lease TTL of %s, not %s: the brokers use the bucket's", durfmt.Duration(st.TTL()), durfmt.Duration(cfg.TTL))
	}
	return r, nil
}

// ReplicaNotes reports the streams and buckets of a grid whose replicas
// differ from want (docs/operations.md says how to move a grid to three).
func ReplicaNotes(ctx context.Context, js jetstream.JetStream, want int) ([]string, error) {
	var out []string
	for _, name := range []string{wire.AuditStream, wire.JobStream, "KV_" + wire.ForecastBucket, "KV_" + wire.LeaderBucket} {
		s, err := js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("stream %s: %w", name, err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			return out, fmt.Errorf("stream %s: %w", name, err)
		}
		if info.Config.Replicas != want {
			out = append(out, fmt.Sprintf("%s has %d replica(s), the configuration says %d (docs/operations.md, \"Moving a grid to three replicas\")", name, info.Config.Replicas, want))
		}
	}
	return out, nil
}

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// forecastBucketConfig is used only when no agent has created the bucket
// yet; TTL makes a dead site's forecast expire.
func forecastBucketConfig(ttl time.Duration, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      wire.ForecastBucket,
		Description: "latest lookahead forecast per site",
		TTL:         ttl,
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	}
}

func ensureBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, cfg.Bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kv bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// watchForecasts follows the bucket until ctx ends: every put of a valid
// forecast updates the site; a bad entry is logged, counted and skipped.
// A site counts as seen when its newest forecast or heartbeat was
// generated (the site's own clock, so a late delivery never makes a dead
// site look alive).
func (b *Broker) watchForecasts(ctx context.Context, kv jetstream.KeyValue) error {
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", wire.ForecastBucket, err)
	}
	defer w.Stop()
	live := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("watch %s: closed", wire.ForecastBucket)
			}
			if e == nil {
				live = true
				b.markReady()
				b.kick()
				continue
			}
			if e.Operation() != jetstream.KeyValuePut {
				continue
			}
			b.takeForecast(e.Key(), e.Value())
			if live {
				b.kick()
			}
		}
	}
}

func (b *Broker) takeForecast(key string, data []byte) {
	f, err := wire.DecodeForecast(data)
	if err != nil {
		b.badForecasts.Add(1)
		b.log.Warn().Err(err).Str("key", key).Msg("forecast rejected")
		return
	}
	if f.Site != key {
		b.badForecasts.Add(1)
		b.log.Warn().Str("key", key).Str("site", f.Site).Msg("forecast rejected: key and site differ")
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	old, known := b.sites[f.Site]
	if known && old.Forecast.Seq > f.Seq {
		return
	}
	if !known {
		b.log.Info().Str("site", f.Site).Uint64("seq", f.Seq).Int("nodes", len(f.Nodes)).Int("slots", len(f.Slots)).Msg("site joined")
	}
	b.sites[f.Site] = &broker.Site{Forecast: *f, LastSeen: max(f.Generated, lastSeen(old))}
}

// heartbeat marks a site alive at the heartbeat's generation time.
func (b *Broker) heartbeat(site string, data []byte) {
	var hb wire.Heartbeat
	if err := json.Unmarshal(data, &hb); err != nil || hb.Site != site {
		b.log.Warn().Str("site", site).Msg("heartbeat rejected")
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.sites[site]; s != nil {
		s.LastSeen = max(s.LastSeen, hb.Generated)
	}
}

func lastSeen(s *broker.Site) int64 {
	if s == nil {
		return 0
	}
	return s.LastSeen
}

// onForecastMsg handles a message on a site's forecast subject: a full
// forecast updates the site; a heartbeat proves the site alive. Only the site's agent may publish on its subject (NATS
// permissions), so the subject names the site.
func (b *Broker) onForecastMsg(m *nats.Msg) {
	site := strings.TrimPrefix(m.Subject, strings.TrimSuffix(wire.ForecastSubjects, "*"))
	if !forecast.IsPlainName(site) {
		return
	}
	if m.Header.Get(wire.HeaderType) != wire.TypeHeartbeat {
		if _, err := wire.DecodeForecast(m.Data); err == nil {
			b.takeForecast(site, m.Data)
			b.kick()
			return
		}
	}
	b.heartbeat(site, m.Data)
}

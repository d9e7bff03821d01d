package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lookahead/broker"
	"lookahead/broker/coalloc"
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
// forecast updates the site; a refused one is logged, counted and
// reported; a deleted or purged key forgets the site.
func (b *Broker) watchForecasts(ctx context.Context, kv jetstream.KeyValue) error {
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", wire.ForecastBucket, err)
	}
	defer w.Stop()
	b.kvMu.Lock()
	b.kv = kv
	b.kvMu.Unlock()
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
				b.forgetSite(e.Key(), e.Operation().String())
			} else {
				b.takeForecast(e.Key(), e.Value(), !live)
			}
			if live {
				b.kick()
			}
		}
	}
}

// takeForecast decodes, validates and takes a forecast site published (its
// KV key or subject names the site; the NATS permissions bind both to the
// site's agent). A payload is decoded once: the subject and the bucket
// carry every forecast twice, and a refused one is not decoded again. A
// stored forecast read at start (stored) says nothing of the site's clock:
// it was received before, at a time the broker does not know, so its
// clock offset waits for the site's next message (its freshness is
// bounded by its own generation time either way).
func (b *Broker) takeForecast(site string, data []byte, stored bool) {
	if !forecast.IsPlainName(site) {
		b.badForecasts.Add(1)
		b.log.Warn().Str("key", wire.Clip(site, 64)).Msg("forecast refused: the key is not a site name")
		return
	}
	digest := sha256.Sum256(data)
	b.mu.Lock()
	same := b.digests[site] == digest
	b.digests[site] = digest
	b.mu.Unlock()
	if same {
		return
	}
	f, window, err := decodeSiteForecast(site, data)
	if window.Changed() {
		b.cfg.Metrics.SlotsOutsideWindow(window.Clipped, window.Dropped)
		b.log.Warn().Str("site", site).Int("clipped", window.Clipped).Int("dropped", window.Dropped).
			Msg("forecast slots outside its window [generated, horizon]: clipped to it, or dropped (docs/formats.md)")
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.sites[site]
	if err != nil {
		b.badForecasts.Add(1)
		b.log.Warn().Err(err).Str("site", site).Int("bytes", len(data)).Msg("forecast refused; the site is out of planning until a good one")
		s := broker.Refuse(cur, site, "forecast refused: "+err.Error(), true)
		b.sites[site] = &s
		return
	}
	s, v := broker.TakeForecast(cur, site, f, now, b.skew())
	if stored && v == broker.Taken {
		s.Offset, s.OffsetKnown = 0, false
	}
	b.sites[site] = &s
	switch v {
	case broker.Refused:
		b.badForecasts.Add(1)
		b.log.Warn().Str("site", site).Uint64("seq", f.Seq).Str("why", s.Problem).Msg("forecast refused")
	case broker.Taken:
		if cur == nil || cur.Forecast.Site == "" || cur.Excluded || f.Seq < cur.Forecast.Seq {
			delete(b.staleRev, site) // a new incarnation numbers its revisions afresh
			b.log.Info().Str("site", site).Uint64("seq", f.Seq).Int("nodes", len(f.Nodes)).Int("slots", len(f.Slots)).Msg("site forecast taken")
		}
	}
}

// decodeSiteForecast decodes a payload (bounded; see wire.DecodeForecast)
// and checks it against the planner's limits, so a forecast the broker
// takes never makes the planner refuse the grid's queue; slots outside the
// forecast's window are clipped to it or dropped, and counted.
func decodeSiteForecast(site string, data []byte) (*forecast.Forecast, forecast.WindowCount, error) {
	var none forecast.WindowCount
	f, err := wire.DecodeForecast(data)
	if err != nil {
		return nil, none, err
	}
	if f.Site != site {
		return nil, none, fmt.Errorf("%w: forecast names site %q, published as %q", forecast.ErrInvalid, wire.Clip(f.Site, 64), site)
	}
	if err := coalloc.ValidateForecast(f); err != nil {
		return nil, none, err
	}
	clipped, window := forecast.ClipToWindow(*f)
	return &clipped, window, nil
}

// forgetSite drops a site whose KV key was deleted or purged.
func (b *Broker) forgetSite(site, op string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, known := b.sites[site]; known {
		delete(b.sites, site)
		delete(b.digests, site)
		b.log.Warn().Str("site", site).Str("op", op).Msg("site forgotten: its forecast was removed from the bucket")
	}
}

// heartbeat refreshes a site when the heartbeat names the forecast in use;
// one naming another revision makes the broker re-read the site's key (the
// forecast it names may have been missed).
func (b *Broker) heartbeat(site string, data []byte) {
	var hb wire.Heartbeat
	if err := wire.DecodeStrict(data, &hb); err != nil || hb.Site != site || hb.Type != wire.TypeHeartbeat || !forecast.IsPlainName(site) {
		b.badForecasts.Add(1)
		b.log.Warn().Str("site", wire.Clip(site, 64)).Msg("heartbeat refused: not a heartbeat of this site")
		return
	}
	now := b.now()
	b.mu.Lock()
	s, v := broker.TakeHeartbeat(b.sites[site], site, hb, now, b.skew())
	if v != broker.Older || b.sites[site] != nil {
		b.sites[site] = &s
	}
	b.mu.Unlock()
	switch v {
	case broker.Taken:
		if hb.Offline {
			b.log.Info().Str("site", site).Uint64("seq", hb.Seq).Msg("site offline: its agent stopped; out of planning until its next forecast")
		}
		if hb.Problem != "" {
			b.log.Warn().Str("site", site).Uint64("seq", hb.Seq).Str("problem", hb.Problem).Msg("site cannot forecast; out of planning until its next forecast")
		}
	case broker.Refused:
		b.badForecasts.Add(1)
		b.log.Warn().Str("site", site).Str("why", s.Problem).Msg("heartbeat refused")
	case broker.Mismatch:
		b.log.Info().Str("site", site).Uint64("seq", hb.Seq).Uint64("holding", s.Forecast.Seq).Msg("heartbeat of another revision; re-reading the site's forecast")
		b.rereads.add(site)
	}
}

// rereadQueue is the set of sites whose forecast key is to be read again
// (a heartbeat named a revision the broker does not hold). It holds each
// site once however many heartbeats ask, so it is bounded by the sites;
// one goroutine of Run drains it (rereadLoop).
type rereadQueue struct {
	mu      sync.Mutex
	pending map[string]struct{}
	wake    chan struct{}
}

func (q *rereadQueue) init() {
	if q.wake == nil {
		q.pending, q.wake = map[string]struct{}{}, make(chan struct{}, 1)
	}
}

// add asks for site's key to be read again.
func (q *rereadQueue) add(site string) {
	q.mu.Lock()
	q.init()
	q.pending[site] = struct{}{}
	wake := q.wake
	q.mu.Unlock()
	select {
	case wake <- struct{}{}:
	default:
	}
}

// woken is signalled after an add.
func (q *rereadQueue) woken() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	return q.wake
}

// take empties the queue, in name order.
func (q *rereadQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	sites := slices.Sorted(maps.Keys(q.pending))
	clear(q.pending)
	return sites
}

// rereadLoop reads again the keys of the sites queued by heartbeats, until
// ctx ends (the broker stops).
func (b *Broker) rereadLoop(ctx context.Context) error {
	woken := b.rereads.woken()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-woken:
		}
		for _, site := range b.rereads.take() {
			if ctx.Err() != nil {
				return nil
			}
			b.reread(ctx, site)
		}
	}
}

// reread fetches a site's forecast from the bucket again.
func (b *Broker) reread(ctx context.Context, site string) {
	b.kvMu.Lock()
	kv := b.kv
	b.kvMu.Unlock()
	if kv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ReserveTimeout)
	defer cancel()
	if e, err := kv.Get(ctx, site); err == nil {
		b.takeForecast(site, e.Value(), false)
	}
}

func (b *Broker) skew() int64 { return int64(b.cfg.MaxClockSkew / time.Second) }

// onForecastMsg handles a message on a site's forecast subject: a
// forecast (gzip payload) or a heartbeat (JSON). Only the site's agent may
// publish on its subject (NATS permissions), so the subject names the site.
func (b *Broker) onForecastMsg(m *nats.Msg) {
	site := strings.TrimPrefix(m.Subject, strings.TrimSuffix(wire.ForecastSubjects, "*"))
	if m.Header.Get(wire.HeaderType) == wire.TypeHeartbeat || !isGzip(m.Data) {
		b.heartbeat(site, m.Data)
		return
	}
	b.takeForecast(site, m.Data, false)
	b.kick()
}

func isGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }

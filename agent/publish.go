package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lookahead/forecast"
	"lookahead/internal/natsconn"
	"lookahead/wire"
)

// publisher puts forecasts on the site's subject and in the forecast KV
// bucket, or a heartbeat when nothing changed. Used by the loop goroutine
// only; seq is read by others through the agent's status.
type publisher struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	kv   jetstream.KeyValue
	site string
	ttl  time.Duration

	seq     uint64
	print   [32]byte
	lastPut time.Time
}

// publishResult says what a publication did.
type publishResult struct {
	kind  string // "forecast" or "heartbeat"
	seq   uint64
	bytes int
	at    time.Time
}

// newPublisher opens (creating if missing) the forecast bucket and the
// audit stream, and continues the site's Seq from the bucket's last entry
// so revisions keep growing across restarts. created is called with what
// it had to create.
func newPublisher(ctx context.Context, nc *nats.Conn, cfg Config, created func(what string)) (*publisher, error) {
	// an audit record whose acknowledgement never comes (a stalled link)
	// is given up after the request timeout
	js, err := natsconn.JetStream(nc, cfg.JSDomain, jetstream.WithPublishAsyncTimeout(cfg.RequestTimeout))
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	kv, err := ensureBucket(ctx, js, cfg, created)
	if err != nil {
		return nil, err
	}
	if err := ensureAuditStream(ctx, js, cfg.Replicas, created); err != nil {
		return nil, err
	}
	p := &publisher{nc: nc, js: js, kv: kv, site: cfg.Site, ttl: cfg.ForecastTTL}
	if e, err := kv.Get(ctx, cfg.Site); err == nil {
		if f, err := wire.DecodeForecast(e.Value()); err == nil {
			p.seq = f.Seq
		}
	}
	return p, nil
}

func ensureBucket(ctx context.Context, js jetstream.JetStream, cfg Config, created func(string)) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, wire.ForecastBucket)
	if err == nil {
		return kv, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("forecast bucket %s: %w", wire.ForecastBucket, err)
	}
	kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: wire.ForecastBucket, Description: "latest forecast per lookahead site",
		History: 1, TTL: cfg.ForecastTTL, Replicas: cfg.Replicas,
	})
	switch {
	case errors.Is(err, jetstream.ErrBucketExists):
		kv, err = js.KeyValue(ctx, wire.ForecastBucket)
	case err == nil:
		created("the forecast bucket " + wire.ForecastBucket)
	}
	if err != nil {
		return nil, fmt.Errorf("create forecast bucket %s: %w", wire.ForecastBucket, err)
	}
	return kv, nil
}

// ShouldPublish decides whether a forecast goes out in full: when it
// differs from the last one published, or when the last full publication
// is half a TTL old (so the KV entry never expires on a live site).
// Otherwise a heartbeat is enough. Pure.
func ShouldPublish(prev, cur [32]byte, lastPut, now time.Time, ttl time.Duration) bool {
	return prev != cur || lastPut.IsZero() || now.Sub(lastPut) >= ttl/2
}

func (p *publisher) publish(ctx context.Context, f *forecast.Forecast, now time.Time) (publishResult, error) {
	fp := Fingerprint(f)
	if !ShouldPublish(p.print, fp, p.lastPut, now, p.ttl) {
		return p.heartbeat(now)
	}
	f.Seq = p.seq + 1
	data, err := wire.EncodeForecast(f)
	if err != nil {
		return publishResult{}, err
	}
	if max := p.nc.MaxPayload(); max > 0 && int64(len(data)) > max {
		return publishResult{}, fmt.Errorf("forecast %d of %s is %d bytes encoded, over the server's max_payload %d: shorten the horizon or raise max_payload",
			f.Seq, p.site, len(data), max)
	}
	if _, err := p.kv.Put(ctx, p.site, data); err != nil {
		return publishResult{}, fmt.Errorf("put forecast %d of %s in %s: %w", f.Seq, p.site, wire.ForecastBucket, err)
	}
	msg := nats.NewMsg(wire.ForecastSubject(p.site))
	msg.Header.Set("Content-Encoding", wire.ForecastEncoding)
	msg.Header.Set(wire.HeaderType, wire.TypeForecast)
	msg.Data = data
	if err := p.nc.PublishMsg(msg); err != nil {
		return publishResult{}, fmt.Errorf("publish forecast %d of %s: %w", f.Seq, p.site, err)
	}
	p.seq, p.print, p.lastPut = f.Seq, fp, now
	return publishResult{kind: "forecast", seq: f.Seq, bytes: len(data), at: now}, nil
}

// pingTimeout bounds the JetStream ping that goes with a heartbeat.
const pingTimeout = 5 * time.Second

// ping asks the grid's JetStream for the account's info: whether the grid
// answers at all.
func (p *publisher) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	_, err := p.js.AccountInfo(ctx)
	return err
}

func (p *publisher) heartbeat(now time.Time) (publishResult, error) {
	return p.sendHeartbeat(wire.Heartbeat{Type: wire.TypeHeartbeat, Site: p.site, Seq: p.seq, Generated: now.Unix()})
}

// offline tells the broker the agent is stopping, so that its site
// leaves planning at once; it waits for the server to have it (bounded).
func (p *publisher) offline(now time.Time) error {
	if p.seq == 0 {
		return nil // nothing published, nothing to withdraw
	}
	if _, err := p.sendHeartbeat(wire.Heartbeat{Type: wire.TypeHeartbeat, Site: p.site, Seq: p.seq, Generated: now.Unix(), Offline: true}); err != nil {
		return err
	}
	return p.nc.FlushTimeout(2 * time.Second)
}

// unavailable tells the broker the site cannot forecast now (why): its
// site leaves planning until the next forecast, which goes out in full
// (the fingerprint is forgotten) once a build succeeds again.
func (p *publisher) unavailable(now time.Time, why error) error {
	if p.seq == 0 {
		return nil // nothing published, nothing to withdraw
	}
	p.print = [32]byte{}
	_, err := p.sendHeartbeat(wire.Heartbeat{Type: wire.TypeHeartbeat, Site: p.site, Seq: p.seq, Generated: now.Unix(),
		Problem: wire.Clip(why.Error(), 300)})
	return err
}

func (p *publisher) sendHeartbeat(hb wire.Heartbeat) (publishResult, error) {
	data, err := json.Marshal(hb)
	if err != nil {
		return publishResult{}, err
	}
	msg := nats.NewMsg(wire.ForecastSubject(p.site))
	msg.Header.Set(wire.HeaderType, wire.TypeHeartbeat)
	msg.Data = data
	if err := p.nc.PublishMsg(msg); err != nil {
		return publishResult{}, fmt.Errorf("publish heartbeat of %s: %w", p.site, err)
	}
	return publishResult{kind: "heartbeat", seq: p.seq, bytes: len(data), at: time.Unix(hb.Generated, 0)}, nil
}

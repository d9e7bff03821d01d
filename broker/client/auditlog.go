package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lookahead/internal/natsconn"
	"lookahead/wire"
)

// LogFilter selects audit records: by grid job, by site (records of that
// origin or about that site), and from a time on (Unix seconds, 0: all).
type LogFilter struct {
	Job   string
	Site  string
	Since int64
	Limit int // most recent records kept; 0: all
}

// Match reports whether r passes the filter.
func (f LogFilter) Match(r wire.AuditRecord) bool {
	if f.Job != "" && r.Job != f.Job {
		return false
	}
	if f.Site != "" && r.Site != f.Site && r.Origin != f.Site {
		return false
	}
	return f.Since == 0 || r.Time >= f.Since
}

// TrustSubject makes a record's origin the one its subject names
// (lookahead.audit.<origin>.<action>): the NATS permissions let each site
// publish only under its own name, while the body is whatever the
// publisher wrote. A site's record is about that site only. What the body
// claimed otherwise is kept in Mismatch.
func TrustSubject(subject string, r *wire.AuditRecord) {
	tok := strings.Split(subject, ".")
	if len(tok) != 4 {
		r.Mismatch = "published outside lookahead.audit.<origin>.<action>"
		return
	}
	origin, action := tok[2], tok[3]
	var claims []string
	if r.Origin != origin {
		claims = append(claims, fmt.Sprintf("origin %q", wire.Clip(r.Origin, 64)))
		r.Origin = origin
	}
	if origin != wire.AuditOriginBroker && r.Site != "" && r.Site != origin {
		claims = append(claims, fmt.Sprintf("site %q", wire.Clip(r.Site, 64)))
		r.Site = origin
	}
	if r.Action != action {
		claims = append(claims, fmt.Sprintf("action %q under subject action %q", wire.Clip(r.Action, 64), action))
	}
	if len(claims) > 0 {
		r.Mismatch = "body claims " + strings.Join(claims, ", ")
	}
}

// AuditLog reads the audit stream from the start (or from Since) and
// returns the records that match, oldest first, each with the origin its
// subject names (see TrustSubject). Undecodable records are counted in bad.
func (c *Client) AuditLog(ctx context.Context, f LogFilter) (recs []wire.AuditRecord, bad int, err error) {
	js, err := natsconn.JetStream(c.nc, c.JSDomain)
	if err != nil {
		return nil, 0, fmt.Errorf("jetstream: %w", err)
	}
	s, err := js.Stream(ctx, wire.AuditStream)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("%w: audit stream %s: %v", ErrUnavailable, wire.AuditStream, err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.State.Msgs == 0 {
		return nil, 0, err
	}
	cfg := jetstream.OrderedConsumerConfig{}
	if f.Since > 0 {
		t := time.Unix(f.Since, 0).Add(-time.Minute) // server time may lead the records' own
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &t
	}
	cons, err := s.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", wire.AuditStream, err)
	}
	for {
		batch, err := cons.Fetch(1000, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return recs, bad, fmt.Errorf("read %s: %w", wire.AuditStream, err)
		}
		n, done := 0, false
		for msg := range batch.Messages() {
			n++
			var r wire.AuditRecord
			if json.Unmarshal(msg.Data(), &r) != nil {
				bad++
			} else if TrustSubject(msg.Subject(), &r); f.Match(r) {
				recs = append(recs, r)
			}
			if meta, err := msg.Metadata(); err == nil && meta.NumPending == 0 {
				done = true
			}
		}
		if done || n == 0 {
			break
		}
	}
	if f.Limit > 0 && len(recs) > f.Limit {
		recs = recs[len(recs)-f.Limit:]
	}
	return recs, bad, nil
}

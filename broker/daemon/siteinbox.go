package daemon

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"lookahead/wire"
)

// siteInbox sends the broker's requests to agents with a reply subject
// that names the site (wire.SiteReplyToken): <inbox prefix>.site.<site>.
// <id>.<n>. The NATS permissions let each site's agent publish only its
// own (packaging/nats/grid.conf), so no site can answer for another, and
// no allow_responses is needed — which a leaf node does not carry: a site
// behind one could not answer a plain inbox. One subscription per site,
// made at the first request to it. Safe for concurrent use.
type siteInbox struct {
	nc     *nats.Conn
	prefix string // "<inbox prefix>.site."
	id     string // this connection's, so brokers of one identity never share a reply

	mu   sync.Mutex
	subs map[string]*nats.Subscription
	wait map[string]chan *nats.Msg // reply subject → its requester
	next uint64
}

// flushTimeout bounds the round trip that makes sure a new subscription
// is known to the server.
const flushTimeout = 5 * time.Second

func newSiteInbox(nc *nats.Conn) *siteInbox {
	prefix := "_INBOX"
	if nc.Opts.InboxPrefix != "" {
		prefix = nc.Opts.InboxPrefix
	}
	return &siteInbox{nc: nc, prefix: prefix + "." + wire.SiteReplyToken + ".", id: strings.TrimPrefix(nats.NewInbox(), nats.InboxPrefix),
		subs: map[string]*nats.Subscription{}, wait: map[string]chan *nats.Msg{}}
}

// request publishes data on subject with a reply subject of site's and
// waits for the reply until ctx ends: nats.ErrNoResponders when no agent
// listens, ctx's error when none answered in time (as
// nats.Conn.RequestWithContext).
func (s *siteInbox) request(ctx context.Context, site, subject string, data []byte) (*nats.Msg, error) {
	reply, ch, err := s.open(ctx, site)
	if err != nil {
		return nil, err
	}
	defer s.close(reply)
	msg := &nats.Msg{Subject: subject, Reply: reply, Data: data}
	if err := s.nc.PublishMsg(msg); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
			return nil, nats.ErrNoResponders
		}
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// open returns a new reply subject of site and the channel its reply
// arrives on, subscribing to the site's replies first if need be.
func (s *siteInbox) open(ctx context.Context, site string) (string, chan *nats.Msg, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	base := s.prefix + site + "." + s.id + "."
	if s.subs[site] == nil {
		sub, err := s.nc.Subscribe(base+"*", s.route)
		if err != nil {
			return "", nil, fmt.Errorf("subscribe to %s's replies: %w", site, err)
		}
		// the server (and through it a leaf node) knows of the
		// subscription before any request that expects it goes out
		fctx, cancel := context.WithTimeout(ctx, flushTimeout)
		err = s.nc.FlushWithContext(fctx)
		cancel()
		if err != nil {
			sub.Unsubscribe()
			return "", nil, fmt.Errorf("subscribe to %s's replies: %w", site, err)
		}
		s.subs[site] = sub
	}
	s.next++
	reply := base + strconv.FormatUint(s.next, 36)
	ch := make(chan *nats.Msg, 1)
	s.wait[reply] = ch
	return reply, ch, nil
}

func (s *siteInbox) close(reply string) {
	s.mu.Lock()
	delete(s.wait, reply)
	s.mu.Unlock()
}

// route hands a reply to its requester; a late or unknown one is dropped.
func (s *siteInbox) route(m *nats.Msg) {
	s.mu.Lock()
	ch := s.wait[m.Subject]
	delete(s.wait, m.Subject)
	s.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

package daemon

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// A site answers when its agent replies to reserve and release requests.
// Publishing forecasts proves nothing of that (the agent may lack the
// permission to serve its subjects, or its service may be hung), so a site
// that leaves a request without a reply is out of planning, whatever its
// forecasts, until it replies to one again: the releases it is owed are
// retried each cycle (one per cycle while it is silent, so a silent site
// costs one timeout per cycle, not one per job) and the first reply brings
// it back. Jobs that owe it a release are planned on the other sites.

// noAnswer reports whether err means the request got no reply at all (no
// agent subscribed, or none replied in time), as opposed to a reply that
// could not be read or the broker stopping.
func noAnswer(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)
}

// heard records what one request to site taught about its answering: err
// nil is a reply; a transport error without a reply marks the site
// unanswered with what was asked. Other errors (the broker stopping, an
// unreadable reply) change nothing. b.mu must not be held.
func (b *Broker) heard(site, asked string, err error) {
	if !forecast.IsPlainName(site) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	defer func() { b.cfg.Metrics.SetUnanswered(b.unansweredCount()) }()
	cur := b.sites[site]
	switch {
	case err == nil:
		if cur != nil && cur.Unanswered != "" {
			s := broker.Answered(*cur)
			b.sites[site] = &s
			b.log.Info().Str("site", site).Str("request", asked).Msg("site answers again: back in planning")
			b.kick()
		}
	case noAnswer(err):
		s := broker.NotAnswering(cur, site, asked+": "+err.Error(), b.now())
		if cur == nil || cur.Unanswered == "" {
			b.log.Warn().Str("site", site).Str("request", asked).Err(err).
				Msg("site does not answer: out of planning until it answers again; its jobs are planned on the other sites")
		}
		b.sites[site] = &s
	}
}

// unanswered reports whether site does not answer requests; b.mu must be
// held.
func (b *Broker) unanswered(site string) bool {
	s := b.sites[site]
	return s != nil && s.Unanswered != ""
}

// touchesUnanswered reports whether a has a part on a site that does not
// answer; b.mu must be held.
func (b *Broker) touchesUnanswered(a forecast.Allocation) bool {
	for _, s := range a.Sites() {
		if b.unanswered(s) {
			return true
		}
	}
	return false
}

// probeUnanswered asks every unanswering site not already tried in this
// pass (tried) for its reservations: a read-only request, so a site owed
// no release still gets the chance to show it answers again.
func (b *Broker) probeUnanswered(ctx context.Context, tried map[string]bool) {
	b.mu.Lock()
	var sites []string
	for name, s := range b.sites {
		if s.Unanswered != "" && !tried[name] {
			sites = append(sites, name)
		}
	}
	b.mu.Unlock()
	for _, site := range sites {
		ctx, cancel := context.WithTimeout(ctx, b.cfg.ReserveTimeout)
		var reply wire.ListReply
		err := b.request(ctx, wire.AgentSubject(site, wire.VerbList), wire.ListRequest{Type: wire.TypeList}, &reply)
		cancel()
		b.heard(site, "list (probe)", err)
	}
}

// unansweredCount is how many sites do not answer; b.mu must be held.
func (b *Broker) unansweredCount() int {
	n := 0
	for _, s := range b.sites {
		if s.Unanswered != "" {
			n++
		}
	}
	return n
}

// ignoredEvent logs and counts a job event the broker does not apply: for
// a job it does not know, or from a site that holds no part of the job
// (a site reporting on another site's job). b.mu is held.
func (b *Broker) ignoredEvent(site string, je wire.JobEvent, unknown bool) {
	reason, msg := "site-not-in-job", "job event ignored: the site holds no part of the job"
	if unknown {
		reason, msg = "unknown-job", "job event ignored: no such job"
	}
	b.cfg.Metrics.JobEventIgnored(reason)
	b.log.Warn().Str("site", site).Str("job", je.Job).Str("state", je.State).Msg(msg)
}

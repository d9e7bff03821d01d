package daemon

import (
	"context"
	"errors"
	"sync"

	"github.com/nats-io/nats.go"

	"lookahead/broker"
	"lookahead/forecast"
	"lookahead/wire"
)

// A site answers when its agent replies to its requests (reserve,
// release, dispatch, stop). Publishing forecasts proves nothing of that
// (the agent may lack the permission to serve its subjects, or its
// process may be hung: SIGSTOPped, swapping), so a site that leaves a
// request without a reply is out of planning, whatever its forecasts,
// until it replies to one again. Finding that out costs the one pass that
// waited; after it nothing waits for the site: the passes of later cycles
// skip it and knock instead (one read-only request in the background, one
// at a time), and the first reply brings it back and asks for a cycle,
// which sends what it is owed (releases, stops, dispatches). Jobs that owe
// it a release are planned on the other sites.

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

// silentSites is the set of sites that do not answer now; b.mu must not
// be held. A pass takes it once at its start: requests to these sites are
// not sent inline (they would hold the pass for a whole timeout each
// cycle) but knocked (knock), and their work waits until they answer.
func (b *Broker) silentSites() map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]bool{}
	for name, s := range b.sites {
		if s.Unanswered != "" {
			out[name] = true
		}
	}
	return out
}

// knockSilent knocks at every site that does not answer now.
func (b *Broker) knockSilent() {
	for site := range b.silentSites() {
		b.knock(site)
	}
}

// knock asks site, in the background, whether it answers again: a
// read-only list request, one at a time per site, that no planning pass
// waits for. Its reply brings the site back (heard), which asks for a
// cycle, and that cycle sends what the site is owed. A knock made while
// the broker is not running its term (knocks.start not called) does
// nothing.
func (b *Broker) knock(site string) {
	ctx, ok := b.knocks.begin(site)
	if !ok {
		return
	}
	go func() {
		defer b.knocks.end(site)
		ctx, cancel := context.WithTimeout(ctx, b.cfg.ReserveTimeout)
		defer cancel()
		var reply wire.ListReply
		err := b.request(ctx, wire.AgentSubject(site, wire.VerbList), wire.ListRequest{Type: wire.TypeList}, &reply)
		b.heard(site, "list (knock)", err)
	}()
}

// knocker owns the knocks in flight: at most one per site, all ended
// before the term's run returns (wait).
type knocker struct {
	mu     sync.Mutex
	ctx    context.Context // nil outside a term
	flying map[string]bool
	wg     sync.WaitGroup
}

// start lets knocks run under ctx (the term's).
func (k *knocker) start(ctx context.Context) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ctx, k.flying = ctx, map[string]bool{}
}

// wait blocks until ctx ends and every knock returned.
func (k *knocker) wait(ctx context.Context) error {
	<-ctx.Done()
	k.mu.Lock()
	k.ctx = nil
	k.mu.Unlock()
	k.wg.Wait()
	return nil
}

func (k *knocker) begin(site string) (context.Context, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ctx == nil || k.flying[site] {
		return nil, false
	}
	k.flying[site] = true
	k.wg.Add(1)
	return k.ctx, true
}

func (k *knocker) end(site string) {
	k.mu.Lock()
	delete(k.flying, site)
	k.mu.Unlock()
	k.wg.Done()
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

package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lookahead/internal/natsconn"
)

// bindFirst and bindMax bound the wait between two attempts to bind to
// the grid's JetStream at start: it doubles from the first to the most.
const (
	bindFirst = time.Second
	bindMax   = 30 * time.Second
)

// bind opens the publisher (the forecast bucket and the audit stream),
// trying again until it works or ctx ends: a site's leaf node whose link
// to the grid is down, or a grid whose servers are still electing their
// JetStream leader, comes up later, and the agent waits for it instead of
// exiting. A failure is logged when it differs from the one before, with
// what may cause it. nil, nil when ctx ended first.
func (a *Agent) bind(ctx context.Context) (*publisher, error) {
	if err := natsconn.CheckDomain(a.cfg.JSDomain); err != nil {
		return nil, fmt.Errorf("nats.js_domain: %w", err) // no retry mends it
	}
	wait, last, tries := bindFirst, "", 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-timer.C:
		}
		pub, err := newPublisher(ctx, a.deps.Conn, a.cfg, a.createdOnGrid)
		tries++
		if err == nil {
			if tries > 1 {
				a.log.Info().Int("attempts", tries).Msg("bound to the grid's JetStream: starting")
			}
			return pub, nil
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		if err.Error() != last {
			a.log.Warn().Err(err).Str("hint", bindHint(err, a.cfg.JSDomain)).Dur("retry_in", wait).
				Msg("the grid's JetStream is not reachable; trying again")
			last = err.Error()
		}
		timer.Reset(wait)
		wait = min(2*wait, bindMax)
	}
}

// bindHint says what an error binding to the grid's JetStream may mean.
func bindHint(err error, domain string) string {
	switch {
	case !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, jetstream.ErrJetStreamNotEnabled) &&
		!errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded):
		return "see the error; lookahead-agent check says more"
	case domain == "":
		return "no JetStream answers: if this site reaches the grid through a leaf node, set nats.js_domain to the grid's domain; else its link or the servers are down (lookahead-agent check tells which)"
	}
	return "JetStream domain " + domain + " does not answer: the leaf node's link to the grid may be down, or the domain is not the grid's (lookahead-agent check tells which)"
}

// createdOnGrid says that the agent created a stream or bucket the
// broker (or `lookahead-broker init`) normally creates: right on a fresh
// single-server grid (logged at info), wrong when the JetStream reached is
// a site's leaf node's own rather than the grid's (a warning: the server
// runs JetStream and has leaf node links, natsconn.Probe).
func (a *Agent) createdOnGrid(what string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if v := natsconn.Probe(ctx, a.deps.Conn, a.cfg.JSDomain).Judge(); !v.OK {
		a.log.Warn().Str("why", v.Detail).Str("fix", v.Fix).Msg("created " + what + " in a JetStream that may not be the grid's")
		return
	}
	a.log.Info().Msg("created " + what + " (on a grid, the broker or `lookahead-broker init` creates it first)")
}

// noteGrid logs when the grid stops and starts answering the agent's
// publications (a forecast put, or a JetStream ping with a heartbeat):
// through a leaf node the agent's own connection stays up while the
// leaf's link to the grid is cut, so this is the line that says so. Used
// by the loop goroutine only.
func (a *Agent) noteGrid(err error) {
	switch {
	case err != nil && a.gridLost.IsZero():
		a.gridLost = time.Now()
		a.log.Warn().Err(err).Str("hint", bindHint(err, a.cfg.JSDomain)).
			Msg("the grid does not answer: forecasts wait; reservations and running parts are kept")
	case err == nil && !a.gridLost.IsZero():
		a.log.Info().Dur("after", time.Since(a.gridLost).Round(time.Millisecond)).Msg("the grid answers again")
		a.gridLost = time.Time{}
	}
}

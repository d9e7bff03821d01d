package agent

import (
	"context"
	"time"
)

// loop builds and publishes a forecast at start, one debounce delay after
// the first event of a burst, and at every refresh. Everything runs on this
// one goroutine, so two forecasts never overlap; events that arrive during
// a build wait in the one-slot kick channel and cost one more forecast.
func (a *Agent) loop(ctx context.Context) error {
	a.cycle(ctx, "start")
	refresh := time.NewTicker(a.cfg.Refresh)
	defer refresh.Stop()
	debounce := time.NewTimer(a.cfg.Debounce)
	debounce.Stop()
	pending := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.kick:
			if !pending {
				pending = true
				debounce.Reset(a.cfg.Debounce)
			}
		case <-debounce.C:
			pending = false
			a.cycle(ctx, "events")
		case <-refresh.C:
			// A refresh covers every event seen so far.
			pending = false
			debounce.Stop()
			a.met.Event(SourceRefresh)
			a.cycle(ctx, "refresh")
		}
	}
}

// cycle builds one forecast and publishes it; failures are logged and
// counted, and the loop carries on.
func (a *Agent) cycle(ctx context.Context, why string) {
	if ctx.Err() != nil {
		return
	}
	start, now := time.Now(), a.deps.Now()
	b, err := a.build(ctx, now)
	if why != "events" { // at start and every refresh: the agent's poll
		a.checkHolds(ctx, b.snap, err == nil, now.Unix())
	}
	if err != nil {
		if ctx.Err() == nil {
			a.log.Error().Err(err).Str("trigger", why).Msg("forecast failed")
			a.withdraw(now, err)
		}
		a.setError(err)
		return
	}
	a.met.ForecastBuilt(time.Since(start))
	if a.pub == nil {
		return
	}
	res, err := a.pub.publish(ctx, &b.forecast, now)
	if err != nil {
		a.met.PublishFailed()
		a.setError(err)
		a.log.Error().Err(err).Str("trigger", why).Msg("publish failed")
		a.noteGrid(err)
		return
	}
	if res.kind == "heartbeat" { // a heartbeat is a plain publish: ask JetStream too
		a.noteGrid(a.pub.ping(ctx))
	} else {
		a.noteGrid(nil)
	}
	a.lag.note(time.Since(start))
	a.published(res, &b)
	a.log.Debug().Str("trigger", why).Str("kind", res.kind).Uint64("seq", res.seq).
		Int("slots", len(b.forecast.Slots)).Int("bytes", res.bytes).Msg("published")
}

// withdraw tells the broker, after a failed build, that the site cannot
// forecast now and why (its scheduler does not answer): it leaves
// planning at once instead of after the broker's site TTL.
func (a *Agent) withdraw(now time.Time, why error) {
	if a.pub == nil {
		return
	}
	if err := a.pub.unavailable(now, why); err != nil {
		a.met.PublishFailed()
		a.log.Error().Err(err).Msg("publish of the site's problem failed")
	}
}
